// --set PATH=VALUE overrides on the resolved experiment.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/experiment.hpp"

using namespace trnsim;

TEST_CASE("config: overrides set values of the resolved experiment") {
  const auto ex = config::parse_experiment(test::small_experiment(), "mem.json",
                                           {"parallelism.tp=16", "parallelism.dp=2", "model.layers=40",
                                            "cluster.chip.hbm_bandwidth_GBps=4900"});
  CHECK(ex.parallelism.tp == 16);
  CHECK(ex.parallelism.dp == 2);
  CHECK(ex.model.layers == 40);
  CHECK(ex.cluster.instance.chip.hbm_bandwidth == Approx(4900e9));
  CHECK(ex.resolved["parallelism"]["tp"] == 16);
  CHECK(ex.resolved["cluster"]["chip"]["hbm_bandwidth_GBps"] == 4900);
}

TEST_CASE("config: an override may set a default the file left out, and a null") {
  auto ex = config::parse_experiment(test::small_experiment(), "mem.json",
                                     {"parallelism.schedule=1f1b-interleaved", "network.model=flow"});
  CHECK(ex.parallelism.schedule == workload::PipelineSchedule::Interleaved);  // VALUE not JSON: a string
  CHECK(ex.network.model == net::NetworkModelKind::Flow);
  ex = config::parse_experiment(test::small_experiment(), "mem.json", {"training.micro_batch=null"});
  CHECK_FALSE(ex.training.micro_batch.has_value());
}

TEST_CASE("config: an override of the instance preset expands the new preset") {
  // 2 trn1.32xlarge = 64 cores; TP 8 x DP 8.
  const auto ex = config::parse_experiment(test::small_experiment(), "mem.json",
                                           {"cluster.instance=trn1n.32xlarge", "cluster.count=2", "parallelism.dp=8"});
  CHECK(ex.cluster.instance.name == "trn1n.32xlarge");
  CHECK(ex.cluster.instances == 2);
  CHECK(ex.cluster.instance.intra.bandwidth == Approx(384e9));  // trn1n's NeuronLink (768 both ways), not trn1's 192
}

TEST_CASE("config: an override of the model by name expands the model preset") {
  const auto ex = config::parse_experiment(test::small_experiment(), "mem.json", {"model=llama3.1-8b"});
  CHECK(ex.model.name == "llama3.1-8b");
  CHECK(ex.model.vocab == 128256);  // Llama 3 tokenizer (arXiv 2407.21783)
}

TEST_CASE("config: cluster.devices replaces the resolved count") {
  auto doc = test::small_experiment();
  doc["cluster"] = {{"instance", "dgx-a100-80gb"}, {"devices", 32}};
  const auto ex = config::parse_experiment(doc, "mem.json", {"cluster.devices=64", "parallelism.dp=8"});
  CHECK(ex.cluster.instances == 8);  // 64 GPUs / 8 per node
}

TEST_CASE("config: an override may set the FSDP prefetch depth the resolved experiment leaves out at 1") {
  // software.fsdp_prefetch_units is written only when it differs from FSDP2's 1; --set reaches it,
  // and its range (0 .. 2^20) holds.
  const auto ex = config::parse_experiment(test::small_experiment(), "mem.json", {"software.fsdp_prefetch_units=3"});
  CHECK(ex.software.fsdp_prefetch_units == 3);
  CHECK(ex.resolved["software"]["fsdp_prefetch_units"] == 3);
  CHECK(config::parse_experiment(test::small_experiment(), "mem.json", {}).software.fsdp_prefetch_units == 1);
  CHECK_THROWS_WITH(config::parse_experiment(test::small_experiment(), "mem.json", {"software.fsdp_prefetch_units=-1"}),
                    Catch::Contains("/software/fsdp_prefetch_units: expected an integer in [0, 1048576] or \"memory\", "
                                    "found -1"));
  // "memory" (SimpleFSDP compiled: as many layers ahead as memory allows) round-trips by name.
  const auto mem = config::parse_experiment(test::small_experiment(), "mem.json", {"software.fsdp_prefetch_units=memory"});
  CHECK(mem.software.fsdp_prefetch_units == workload::kPrefetchAsMemoryAllows);
  CHECK(mem.resolved["software"]["fsdp_prefetch_units"] == "memory");
  CHECK_THROWS_WITH(config::parse_experiment(test::small_experiment(), "mem.json", {"software.fsdp_prefetch_units=lots"}),
                    Catch::Contains("/software/fsdp_prefetch_units: expected an integer in [0, 1048576] or \"memory\", "
                                    "found \"lots\""));
}

TEST_CASE("config: an override may set a MoE key the resolved experiment leaves out at its default") {
  // The resolved experiment writes parallelism.ep, training.moe_* and the model's MoE layout only
  // when set; --set reaches them all the same, and the parser checks them (a dense model: error).
  auto doc = test::small_experiment();
  doc["model"]["experts"] = 8;
  doc["model"]["experts_per_token"] = 2;
  const auto ex = config::parse_experiment(doc, "mem.json",
                                           {"parallelism.ep=4", "training.moe_imbalance=1.5", "model.shared_experts=1",
                                            "software.moe_pad_to_capacity=true"});
  CHECK(ex.parallelism.ep == 4);
  CHECK(ex.training.moe_imbalance == 1.5);
  CHECK(ex.model.shared_experts == 1);
  CHECK(ex.software.moe_pad_to_capacity);
  CHECK(ex.resolved["parallelism"]["ep"] == 4);
  CHECK_THROWS_AS(config::parse_experiment(test::small_experiment(), "mem.json", {"parallelism.ep=4"}), InputError);
}

TEST_CASE("config: overrides are one edit, checked once") {
  SECTION("a state between two overrides is never checked") {
    // One trn3 UltraServer is 4 instances of 16 chips, 64 logical cores each
    // (configs/hardware/trn3-gen1-ultraserver.json): 256 ranks = tp 8 x dp 32, and the global batch
    // of 64 divides over dp 32. The instance alone (the file's count of 1) is no whole UltraServer.
    for (const auto& sets :
         {std::vector<std::string>{"cluster.instance=trn3-gen1-ultraserver", "cluster.count=4", "parallelism.dp=32"},
          std::vector<std::string>{"parallelism.dp=32", "cluster.count=4", "cluster.instance=trn3-gen1-ultraserver"}}) {
      const auto ex = config::parse_experiment(test::small_experiment(), "mem.json", sets);
      CHECK(ex.cluster.instance.name == "trn3-gen1-ultraserver");
      CHECK(ex.cluster.instances == 4);
      CHECK(ex.resolved["cluster"]["count"] == 4);
    }
  }
  SECTION("a default that follows another field follows its overridden value") {
    // kv_heads defaults to heads (configs/README.md, "Model"): with heads overridden to 16, 16,
    // not the file's 32 that the resolved experiment would have frozen before the override.
    auto doc = test::small_experiment();
    doc["model"].erase("kv_heads");
    const auto ex = config::parse_experiment(doc, "mem.json", {"model.heads=16"});
    CHECK(ex.model.kv_heads == 16);
  }
}
