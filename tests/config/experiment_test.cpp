// Good inputs: bundled examples and the published validation files load into the specs.
#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/experiment.hpp"

using namespace trnsim;
using trnsim::test::source_path;

namespace {
std::vector<std::string> json_files_in(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(source_path(dir)))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

TEST_CASE("config: every bundled example loads") {
  const auto files = json_files_in("configs/examples");
  REQUIRE(files.size() >= 5);
  for (const auto& f : files) {
    INFO(f);
    CHECK_NOTHROW(config::load_experiment(f));
  }
}

TEST_CASE("config: every published validation file parses as it is") {
  const auto files = json_files_in("configs/validation");
  // 10 Megatron-LM Table 1 rows + 4 calibrated Neuron Trn1 rows + 6 out-of-family rows (issue 34)
  REQUIRE(files.size() == 20);
  for (const auto& f : files) {
    INFO(f);
    const auto ex = config::load_experiment(f);
    REQUIRE(ex.measured.has_value());
    CHECK(ex.measured->step_time_s > 0);
  }
}

TEST_CASE("config: a Neuron validation row reads its published values, nulls stay unpublished") {
  const auto ex = config::load_experiment(source_path("configs/validation/neuron-trn1-gpt3-23b.json"));
  CHECK(ex.cluster.instance.name == "trn1.32xlarge");
  CHECK(ex.cluster.instances == 32);
  CHECK(ex.cluster.ranks() == 32 * 32);
  CHECK(ex.model.layers == 28);
  CHECK(ex.model.hidden == 8192);
  CHECK(ex.training.precision == workload::Precision::Bf16Sr);
  CHECK(ex.training.micro_batch == 1);
  CHECK(ex.parallelism.tp == 8);
  CHECK_FALSE(ex.parallelism.sequence_parallel.has_value());
  CHECK_FALSE(ex.parallelism.zero.has_value());
  CHECK_FALSE(ex.parallelism.schedule.has_value());
  CHECK_FALSE(ex.parallelism.recompute.has_value());
  CHECK(ex.measured->step_time_s == Approx(9.554));
  CHECK(ex.measured->published == "107.18 seq/s");
  CHECK(ex.resolved["parallelism"]["zero"].is_null());
}

TEST_CASE("config: a GPU cluster given in devices has devices / 8 DGX nodes") {
  const auto ex = config::load_experiment(source_path("configs/validation/megatron2021-t1-1008b.json"));
  CHECK(ex.cluster.instance.chip.family == hw::Family::Gpu);
  CHECK(ex.cluster.instances == 3072 / 8);
  CHECK(ex.resolved["cluster"]["count"] == 384);
  CHECK_FALSE(ex.resolved["cluster"].contains("devices"));
  CHECK(ex.parallelism.schedule == workload::PipelineSchedule::Interleaved);
  CHECK_FALSE(ex.training.micro_batch.has_value());
  CHECK(ex.training.precision == workload::Precision::Fp16);
  CHECK(ex.training.optimizer == workload::Optimizer::Adam);
}

TEST_CASE("config: units in keys convert to SI") {
  auto doc = test::small_experiment();
  doc["cluster"]["chip"] = {{"hbm_bandwidth_GBps", 4900}};
  doc["cluster"]["intra"] = {{"latency_us", 2.5}};
  doc["cluster"]["efa"] = {{"bandwidth_Gbps", 1600}, {"nics", 16}};
  doc["cluster"]["fabric"] = {{"oversubscription", 2}, {"switch_latency_us", 0.5}};
  doc["training"]["gradient_bucket_MB"] = 50;
  const auto ex = config::parse_experiment(doc, "mem.json");
  CHECK(ex.cluster.instance.chip.hbm_bandwidth == Approx(4900e9));   // GB = 1e9 bytes
  CHECK(ex.cluster.instance.intra.latency == Approx(2.5e-6));
  CHECK(ex.cluster.instance.intra.bandwidth == Approx(192e9));      // not overridden: the preset's
  CHECK(ex.cluster.instance.efa.bandwidth == Approx(1600e9 / 8));   // bits -> bytes
  CHECK(ex.cluster.instance.chip.hbm_bytes == Approx(32.0 * 1073741824.0));  // GiB = 2^30 bytes
  CHECK(ex.cluster.fabric.oversubscription == 2);
  CHECK(ex.cluster.fabric.switch_latency == Approx(0.5e-6));
  CHECK(ex.training.gradient_bucket_bytes == Approx(50e6));
  // The resolved JSON keeps the overriding value and the preset's other figures.
  CHECK(ex.resolved["cluster"]["chip"]["hbm_bandwidth_GBps"] == 4900);
  CHECK(ex.resolved["cluster"]["chip"]["hbm_GiB"] == 32);
}

TEST_CASE("config: the resolved experiment fills every default") {
  const auto ex = config::parse_experiment(test::small_experiment(), "mem.json");
  const auto& r = ex.resolved;
  CHECK(r["model"]["arch"] == "decoder");
  CHECK(r["model"]["experts"] == 0);
  CHECK(r["training"]["gradient_bucket_MB"] == 25);
  CHECK(r["parallelism"]["rank_order"] == "tp,dp,pp");
  CHECK(r["parallelism"]["schedule"].is_null());
  CHECK(r["network"]["model"] == "analytic");
  CHECK(r["network"]["algorithm"] == "auto");
  CHECK(r["cluster"]["fabric"]["oversubscription"] == 1);
  // From the preset (trn1.32xlarge.json), not the experiment file:
  CHECK(r["cluster"]["calibration"]["collective_dma_share"].is_number());
  // The collective figures come from the software's runtime release: null as inputs, shown under
  // "derived" (neuronx-distributed runs release 2.19, whose message cost is 0).
  CHECK(r["cluster"]["calibration"]["collective_message_us"].is_null());
  CHECK(r["cluster"]["calibration"]["derived"]["collective_message_us"] == 0);
  // Parsing the resolved JSON again gives the same resolved JSON (a fixed point).
  const auto again = config::parse_experiment(r, "resolved.json");
  CHECK(again.resolved == r);
}

TEST_CASE("config: a model preset name expands to the preset") {
  auto doc = test::small_experiment();
  doc["model"] = "llama2-7b";
  doc["parallelism"] = {{"tp", 8}, {"dp", 4}};
  const auto ex = config::parse_experiment(doc, "mem.json");
  // Llama 2 7B (arXiv 2307.09288): 32 layers, 4096 hidden, 32 heads, 11008 FFN, 32000 vocab.
  CHECK(ex.model.name == "llama2-7b");
  CHECK(ex.model.layers == 32);
  CHECK(ex.model.ffn_hidden == 11008);
  CHECK(ex.model.mlp == workload::MlpKind::SwiGlu);
  CHECK(ex.resolved["model"]["vocab"] == 32000);
}

TEST_CASE("config: MoE fields parse and are checked") {
  auto doc = test::small_experiment();
  doc["model"]["experts"] = 8;
  doc["model"]["experts_per_token"] = 2;
  CHECK(config::parse_experiment(doc, "m.json").model.is_moe());
  doc["model"]["experts_per_token"] = 9;
  CHECK(test::input_error([&] { config::parse_experiment(doc, "m.json"); }) ==
        "m.json: /model/experts_per_token: expected an integer in [1, 8] (experts), found 9");
}
