// Every preset loads, and the figures derived from it match the published instance totals.
// The totals are written here from shared/data/hardware.md and the AWS/NVIDIA product pages,
// not read from the JSON.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/units.hpp"
#include "trnsim/workload/software.hpp"

using namespace trnsim;

namespace {
using units::kGiB;
double hbm_GiB(const hw::InstanceSpec& i) { return i.chip.hbm_bytes * i.chips / kGiB; }
double efa_Gbps(const hw::InstanceSpec& i) { return i.efa.bandwidth * 8 / 1e9; }
double tflops(const hw::InstanceSpec& i, hw::Dtype d) { return i.peak_flops(d) / 1e12; }
}  // namespace

TEST_CASE("presets: the required instance and model presets exist and all load") {
  const auto list = config::list_presets();
  for (const char* name : {"trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "trn2u.48xlarge",
                           "trn3-gen1-ultraserver", "trn3-gen2-ultraserver", "dgx-a100-80gb", "p4d.24xlarge",
                           "p5.48xlarge"}) {
    INFO(name);
    CHECK(std::count(list.instances.begin(), list.instances.end(), name) == 1);
  }
  for (const char* name : {"gpt3-175b", "gpt3-23b", "gpt3-46b", "llama2-7b", "llama2-13b", "llama2-70b",
                           "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b", "bert-large"}) {
    INFO(name);
    CHECK(std::count(list.models.begin(), list.models.end(), name) == 1);
  }
  for (const auto& name : list.instances) {
    INFO(name);
    const auto inst = config::load_instance(name);
    CHECK(inst.name == name);
    CHECK_FALSE(inst.source.empty());
    CHECK_FALSE(inst.calibration.source.empty());
  }
  for (const auto& name : list.models) {
    INFO(name);
    CHECK_FALSE(config::load_model(name).source.empty());
  }
}

TEST_CASE("presets: every calibration constant of every hardware file states its provenance") {
  for (const auto& name : config::list_presets().instances) {
    INFO(name);
    const auto doc = config::read_instance_json(name);
    const auto& cal = doc.at("calibration");
    REQUIRE(cal.contains("sources"));
    // Every constant present, whatever its name: a new one cannot slip in without provenance.
    for (const auto& [key, value] : cal.items()) {
      if (key == "sources") continue;
      INFO(key);
      REQUIRE(cal["sources"].contains(key));
      const std::string text = cal["sources"][key].get<std::string>();
      CHECK(text.size() >= 20);  // a sentence, not a placeholder
      CHECK(text.find("TBD") == std::string::npos);
    }
  }
}

TEST_CASE("presets: trn1.32xlarge matches its published instance totals") {
  // trn1-arch.rst: 16 chips, 32 NeuronCores, 3,040 TFLOPS BF16, 760 FP32, 512 GiB HBM at 13,120 GiB/s,
  // 800 Gbps EFA, NeuronLink-v2 384 GB/s per chip in a 4x4 torus.
  const auto i = config::load_instance("trn1.32xlarge");
  CHECK(i.chips == 16);
  CHECK(i.chips * i.chip.physical_cores == 32);
  CHECK(i.ranks() == 32);
  CHECK(tflops(i, hw::Dtype::Bf16) == Approx(3040));
  CHECK(tflops(i, hw::Dtype::Fp32) == Approx(760));
  CHECK(hbm_GiB(i) == Approx(512));
  CHECK(i.chip.hbm_bandwidth * i.chips / kGiB == Approx(13120).epsilon(1e-4));
  CHECK(efa_Gbps(i) == Approx(800));
  // 384 GB/s per chip counts both directions (configs/hardware/trn1.32xlarge.json, intra): 192 each way.
  CHECK(i.intra.bandwidth == Approx(384e9 / 2));
  CHECK(i.topology == hw::IntraTopology::Torus2D);
  CHECK(i.torus_x * i.torus_y == 16);
  CHECK(i.calibration.comm_compute_slowdown == 1.0);  // dedicated collective cores
}

TEST_CASE("presets: trn1n.32xlarge doubles trn1's NeuronLink and EFA") {
  const auto i = config::load_instance("trn1n.32xlarge");  // trn1-arch.rst: 768 GB/s (both ways), 1,600 Gbps
  CHECK(i.intra.bandwidth == Approx(768e9 / 2));
  CHECK(efa_Gbps(i) == Approx(1600));
  CHECK(tflops(i, hw::Dtype::Bf16) == Approx(3040));
}

TEST_CASE("presets: trn1.2xlarge is one chip with no EFA") {
  const auto i = config::load_instance("trn1.2xlarge");
  CHECK(i.chips == 1);
  CHECK(i.ranks() == 2);
  CHECK(tflops(i, hw::Dtype::Bf16) == Approx(190));
  CHECK(hbm_GiB(i) == Approx(32));
  CHECK(i.nics == 0);
  CHECK_THAT(test::input_error([] { config::load_cluster("trn1.2xlarge", 2); }), Catch::Contains("no EFA"));
}

TEST_CASE("presets: trn2.48xlarge matches its published instance totals") {
  // trn2-arch.rst / trainium2.rst: 16 chips x 667 = 10,672 TFLOPS BF16, x 1,299 = 20,784 FP8 (20.8 PFLOPS),
  // 16 x 96 GiB = 1.5 TiB HBM at 16 x 2.9 = 46.4 TB/s, 128 NeuronCores (64 logical at LNC=2), 3,200 Gbps EFA.
  const auto i = config::load_instance("trn2.48xlarge");
  CHECK(tflops(i, hw::Dtype::Bf16) == Approx(10672));
  CHECK(tflops(i, hw::Dtype::Fp8) == Approx(20784));
  CHECK(hbm_GiB(i) == Approx(1.5 * 1024));
  CHECK(i.chip.hbm_bandwidth * i.chips == Approx(46.4e12));
  CHECK(i.chips * i.chip.physical_cores == 128);
  CHECK(i.ranks() == 64);
  CHECK(efa_Gbps(i) == Approx(3200));
  CHECK(i.intra.bandwidth == Approx(1024e9 / 2));  // 1,024 GB/s per chip, both directions together
}

TEST_CASE("presets: a Trn2 UltraServer is 4 trn2u.48xlarge with 64 chips") {
  // trn2-arch.rst: 4 instances, 64 chips, 256 GB/s per chip between instances; 64 x 1,299 = 83.1 PFLOPS FP8.
  const auto c = config::load_cluster("trn2u.48xlarge", 4);
  CHECK(c.instance.ultraserver_instances == 4);
  CHECK(c.chips() == 64);
  CHECK(c.instance.ultraserver_link.bandwidth == Approx(256e9 / 2));  // both directions together
  CHECK(tflops(c.instance, hw::Dtype::Fp8) * c.instances == Approx(83136));
  CHECK_THAT(test::input_error([] { config::load_cluster("trn2u.48xlarge", 6); }),
             Catch::Contains("whole number of UltraServers"));
}

TEST_CASE("presets: Trn3 UltraServers hold 64 (Gen1) and 144 (Gen2) chips") {
  // trn3-arch.rst: Gen1 4 servers x 16 chips, EFA 12,800 Gbps; Gen2 36 servers x 4 chips, EFA 28,800 Gbps;
  // trainium3.rst: 671 TFLOPS BF16, 2,517 MXFP8, 144 GiB per chip.
  const auto g1 = config::load_instance("trn3-gen1-ultraserver");
  const auto g2 = config::load_instance("trn3-gen2-ultraserver");
  CHECK(g1.chips * g1.ultraserver_instances == 64);
  CHECK(g2.chips * g2.ultraserver_instances == 144);
  CHECK(efa_Gbps(g1) * g1.ultraserver_instances == Approx(12800));
  CHECK(efa_Gbps(g2) * g2.ultraserver_instances == Approx(28800));
  CHECK(tflops(g2, hw::Dtype::Fp8) * g2.ultraserver_instances == Approx(144 * 2517));
  CHECK(hbm_GiB(g1) * g1.ultraserver_instances == Approx(64 * 144));
  CHECK(g1.topology == hw::IntraTopology::Switched);
  CHECK(g1.intra.bandwidth == Approx(256e9));
  CHECK(g1.ultraserver_link.bandwidth == Approx(320e9));
  CHECK(g1.inter_rack_link.bandwidth == Approx(128e9));
}

TEST_CASE("presets: GPU systems match their published totals") {
  // DGX A100 640GB: 8 x 312 = 2,496 TFLOPS BF16, 640 GB HBM, 8 x 200 Gb/s InfiniBand, NVLink 600 GB/s
  // both directions. p4d.24xlarge: 320 GB HBM, 400 Gbps EFA. p5.48xlarge: 8 x 989 TFLOPS, 640 GB, 3,200 Gbps.
  const auto dgx = config::load_instance("dgx-a100-80gb");
  CHECK(dgx.chip.family == hw::Family::Gpu);
  CHECK(dgx.chip.physical_cores == 1);
  CHECK(dgx.ranks() == 8);
  CHECK(tflops(dgx, hw::Dtype::Bf16) == Approx(2496));
  CHECK(hbm_GiB(dgx) == Approx(640));
  CHECK(efa_Gbps(dgx) == Approx(1600));
  CHECK(2 * dgx.intra.bandwidth == Approx(600e9));
  CHECK(dgx.topology == hw::IntraTopology::NvSwitch);
  CHECK(dgx.calibration.comm_compute_slowdown > 1.0);  // NCCL runs on SMs
  const auto p4d = config::load_instance("p4d.24xlarge");
  CHECK(hbm_GiB(p4d) == Approx(320));
  CHECK(efa_Gbps(p4d) == Approx(400));
  CHECK(tflops(p4d, hw::Dtype::Bf16) == Approx(2496));
  const auto p5 = config::load_instance("p5.48xlarge");
  CHECK(tflops(p5, hw::Dtype::Bf16) == Approx(8 * 989));
  CHECK(hbm_GiB(p5) == Approx(640));
  CHECK(efa_Gbps(p5) == Approx(3200));
  CHECK(2 * p5.intra.bandwidth == Approx(900e9));
}

TEST_CASE("presets: an unknown preset name lists the known ones") {
  const auto msg = test::input_error([] { config::load_instance("trn9"); });
  CHECK_THAT(msg, Catch::StartsWith("unknown instance preset \"trn9\""));
  CHECK_THAT(msg, Catch::Contains("trn2.48xlarge"));
}

TEST_CASE("presets: TRNSIM_CONFIG_DIR points preset lookup at another directory") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "trnsim-config-dir-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "hardware");
  fs::create_directories(dir / "models");
  fs::copy_file(test::source_path("configs/hardware/trn1.32xlarge.json"), dir / "hardware/trn1.32xlarge.json");
  ::setenv("TRNSIM_CONFIG_DIR", dir.c_str(), 1);
  const auto list = config::list_presets();
  ::unsetenv("TRNSIM_CONFIG_DIR");
  fs::remove_all(dir);
  CHECK(list.instances == std::vector<std::string>{"trn1.32xlarge"});
  CHECK(list.models.empty());
}

TEST_CASE("presets: a preset whose name differs from its file is rejected") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "trnsim-config-name-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "hardware");
  fs::copy_file(test::source_path("configs/hardware/trn1.32xlarge.json"), dir / "hardware/other.json");
  ::setenv("TRNSIM_CONFIG_DIR", dir.c_str(), 1);
  const auto msg = test::input_error([] { config::load_instance("other"); });
  ::unsetenv("TRNSIM_CONFIG_DIR");
  fs::remove_all(dir);
  CHECK(msg == (dir / "hardware/other.json").string() +
                   ": /name: expected \"other\" (the file's name), found \"trn1.32xlarge\"");
}

// The software presets added for issue 34's rows. The expected values are written here from
// shared/data/software.md (the section named beside each), not read from the JSON.
TEST_CASE("presets: the llm-foundry, nemo-24.07 and axlearn-neuron presets state their stacks' facts") {
  using workload::Storage;
  const auto list = config::list_presets();
  for (const char* name : {"llm-foundry", "nemo-24.07", "axlearn-neuron"}) {
    INFO(name);
    CHECK(std::count(list.software.begin(), list.software.end(), name) == 1);
  }

  SECTION("llm-foundry: Composer FULL_SHARD, DEFAULT mixed precision, flash attention, NCCL") {
    const auto s = config::load_software("llm-foundry");
    CHECK(s.defaults.zero == 3);  // FULL_SHARD
    const auto* bf16 = s.stated_precision(workload::Precision::Bf16);
    REQUIRE(bf16 != nullptr);
    CHECK(bf16->weights == Storage::Bf16);     // DEFAULT: parameters in the autocast precision
    CHECK(bf16->gradients == Storage::Fp32);   // DEFAULT: gradient reduction in fp32
    CHECK(s.kernels.attention == hw::AttentionKernel::Flash);
    CHECK(s.collectives.library == "nccl");
    CHECK(s.collectives.release.empty());  // NCCL presets name no release
  }
  SECTION("nemo-24.07: distributed optimizer, overlapped grad sync, TP overlap, no AC, its own fp8 recipe") {
    const auto s = config::load_software("nemo-24.07");
    CHECK(s.defaults.zero == 1);  // distributed_fused_adam: optimizer states sharded over DP
    CHECK(s.defaults.micro_batch == 1);
    CHECK(s.defaults.sequence_parallel == true);
    CHECK(s.defaults.recompute == workload::Recompute::None);
    CHECK(s.overlap.dp_reduction == workload::DpReduction::Overlapped);  // overlap_grad_sync
    CHECK(s.overlap.tp_comm);                                           // TP comm overlap (70B)
    CHECK(s.kernels.fused_grad_accumulation);
    const auto* fp8 = s.stated_precision(workload::Precision::Fp8);
    REQUIRE(fp8 != nullptr);  // no generic fp8 recipe for a Transformer Engine run
    CHECK(fp8->weights == Storage::Bf16);  // megatron_amp_O2: bf16 weights, cast to FP8 per GEMM
    CHECK(fp8->master_weights == Storage::Fp32);
  }
  SECTION("axlearn-neuron: FSDP, fp32 parameters and state, the compiler's early gathers and late reductions") {
    const auto s = config::load_software("axlearn-neuron");
    CHECK(s.defaults.zero == 3);
    CHECK(s.defaults.sequence_parallel == true);  // sequence-parallel norms in the trn2 rule
    const auto* bf16 = s.stated_precision(workload::Precision::Bf16);
    REQUIRE(bf16 != nullptr);
    CHECK(bf16->master_weights == Storage::Fp32);
    CHECK(bf16->optimizer_states == Storage::Fp32);
    CHECK(s.overlap.dp_reduction == workload::DpReduction::AfterBackward);
    CHECK_FALSE(s.overlap.tp_comm);  // TP collectives not overlapped on Neuron
    CHECK(s.fsdp_prefetch_units == workload::kPrefetchAsMemoryAllows);
    CHECK(s.collectives.library == "neuron-runtime");
    CHECK(s.collectives.release == "2.19");  // Trainium2 from Neuron SDK 2.21
  }
  SECTION("neuron-pytorch-dp: autocast BF16 keeps fp32 parameters and gradients, no master copy") {
    const auto s = config::load_software("neuron-pytorch-dp");
    const auto* bf16 = s.stated_precision(workload::Precision::Bf16);
    REQUIRE(bf16 != nullptr);
    CHECK(bf16->weights == Storage::Fp32);
    CHECK(bf16->gradients == Storage::Fp32);
    CHECK(bf16->master_weights == Storage::None);
    const auto* sr = s.stated_precision(workload::Precision::Bf16Sr);
    REQUIRE(sr != nullptr);
    CHECK(sr->weights == Storage::Bf16);  // the calibrated BERT row's recipe, unchanged
  }
}
