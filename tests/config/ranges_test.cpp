// Every numeric field has a physical range (src/config/*_fields.cpp): a value outside it is an
// input error naming the file (and the --set), the JSON path, the range and the value, whether
// it comes from a file or from an override. Expected messages are written from the ranges the
// tables document (configs/README.md, "Ranges").
#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/experiment.hpp"

using trnsim::config::parse_experiment;
using trnsim::test::input_error;
using trnsim::test::small_experiment;

namespace {
const std::string kRangesFile = "x.json";

std::string range_error(const nlohmann::json& doc, const std::vector<std::string>& overrides = {}) {
  return input_error([&] { parse_experiment(doc, kRangesFile, overrides); });
}

// Sets `value` at the JSON pointer `path` of the small experiment (creating the objects on the way).
std::string error_with(const std::string& path, const nlohmann::json& value) {
  auto doc = small_experiment();
  doc[nlohmann::json::json_pointer(path)] = value;
  return range_error(doc);
}
}  // namespace

TEST_CASE("ranges: a hardware figure outside its physical range names path, range and value") {
  // Three values that, given by --set, used to end in the internal error "sim::Time: seconds value out
  // of range" instead of naming their path.
  CHECK(error_with("/cluster/chip/peak/bf16_tflops", 1e308) ==
        kRangesFile + ": /cluster/chip/peak/bf16_tflops: expected a number in [0.001, 1e+06], found 1e+308");
  CHECK(error_with("/cluster/calibration/task_overhead_us", 1e30) ==
        kRangesFile + ": /cluster/calibration/task_overhead_us: expected a number in [0, 1e+06], found 1e+30");
  CHECK(error_with("/cluster/chip/dma_bandwidth_GBps", 1e-300) ==
        kRangesFile + ": /cluster/chip/dma_bandwidth_GBps: expected 0 (not known: core-to-core copies at half the HBM bandwidth) or a number in [0.001, 1e+07], "
                "found 1e-300");
  CHECK(error_with("/cluster/intra/latency_us", 1e30) ==
        kRangesFile + ": /cluster/intra/latency_us: expected a number in [0, 1e+06], found 1e+30");
  CHECK(error_with("/cluster/efa/bandwidth_Gbps", -1) ==
        kRangesFile + ": /cluster/efa/bandwidth_Gbps: expected 0 (no EFA) or a number in [0.001, 1e+08], found -1");
  CHECK(error_with("/cluster/chips", 4096) == kRangesFile + ": /cluster/chips: expected an integer in [1, 1024], found 4096");
  CHECK(error_with("/cluster/fabric/oversubscription", 0.5) ==
        kRangesFile + ": /cluster/fabric/oversubscription: expected a number in [1, 1000], found 0.5");
}

TEST_CASE("ranges: a model, training or parallelism value outside its range names path, range and value") {
  CHECK(error_with("/model/hidden", 1000000000) ==
        kRangesFile + ": /model/hidden: expected an integer in [1, 16777216], found 1000000000");
  CHECK(error_with("/model/layers", 1000000) ==
        kRangesFile + ": /model/layers: expected an integer in [1, 100000], found 1000000");
  CHECK(error_with("/training/seq_len", 1 << 30) ==
        kRangesFile + ": /training/seq_len: expected an integer in [1, 16777216], found 1073741824");
  CHECK(error_with("/training/gradient_bucket_MB", 1e30) ==
        kRangesFile + ": /training/gradient_bucket_MB: expected a number in [1e-06, 1e+06], found 1e+30");
  CHECK(error_with("/parallelism/dp", 1 << 21) ==
        kRangesFile + ": /parallelism/dp: expected an integer in [1, 1048576], found 2097152");
  CHECK(error_with("/parallelism/zero", 4) == kRangesFile + ": /parallelism/zero: expected an integer in [0, 3], found 4");
}

TEST_CASE("ranges: --set values meet the same ranges and name the override") {
  CHECK(range_error(small_experiment(), {"cluster.calibration.task_overhead_us=1e30"}) ==
        kRangesFile + " (with --set cluster.calibration.task_overhead_us=1e30): /cluster/calibration/task_overhead_us: "
                "expected a number in [0, 1e+06], found 1e+30");
  CHECK(range_error(small_experiment(), {"cluster.chip.peak.bf16_tflops=1e308"}) ==
        kRangesFile + " (with --set cluster.chip.peak.bf16_tflops=1e308): /cluster/chip/peak/bf16_tflops: "
                "expected a number in [0.001, 1e+06], found 1e+308");
  CHECK(range_error(small_experiment(), {"model.vocab=0"}) ==
        kRangesFile + " (with --set model.vocab=0): /model/vocab: expected an integer in [1, 16777216], found 0");
  CHECK(range_error(small_experiment(), {"training.micro_batch=-1"}) ==
        kRangesFile + " (with --set training.micro_batch=-1): /training/micro_batch: expected an integer in [1, 1048576], "
                "found -1");
  CHECK(range_error(small_experiment(), {"parallelism.tp=1e7"}) ==
        kRangesFile + " (with --set parallelism.tp=1e7): /parallelism/tp: expected an integer in [1, 1048576], found "
                "10000000.0");
}

TEST_CASE("ranges: a range's end points are accepted") {
  auto doc = small_experiment();
  doc["cluster"]["calibration"] = {{"matmul_efficiency", 1}, {"task_overhead_us", 0}};
  doc["cluster"]["chip"] = {{"hbm_GiB", 0.001}};  // 1 MiB: runs out of memory, but is a chip
  CHECK(range_error(doc).empty());
}
