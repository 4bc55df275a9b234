// Every bad input is an InputError naming the file, the JSON path and what was expected/found.
#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/experiment.hpp"

using trnsim::config::parse_experiment;
using trnsim::test::input_error;
using trnsim::test::small_experiment;

namespace {
const std::string kFile = "configs/examples/x.json";

std::string error_for(const nlohmann::json& doc, const std::vector<std::string>& overrides = {}) {
  return input_error([&] { parse_experiment(doc, kFile, overrides); });
}
}  // namespace

TEST_CASE("config: the small experiment used by these tests is valid") {
  CHECK(error_for(small_experiment()) == "");
}

TEST_CASE("config: an unknown key names its path and the keys that exist") {
  auto doc = small_experiment();
  doc["training"]["seqlen"] = 4096;
  const auto msg = error_for(doc);
  CHECK_THAT(msg, Catch::StartsWith(kFile + ": /training/seqlen: unknown key"));
  CHECK_THAT(msg, Catch::Contains("seq_len"));
}

TEST_CASE("config: an unknown key in a partial override of the hardware preset is rejected") {
  auto doc = small_experiment();
  doc["cluster"]["chip"] = {{"hbm_bandwith_GBps", 4900}};
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /cluster/chip/hbm_bandwith_GBps: unknown key"));
}

TEST_CASE("config: a value of the wrong type names expected and found") {
  auto doc = small_experiment();
  doc["parallelism"]["tp"] = "eight";
  CHECK(error_for(doc) == kFile + ": /parallelism/tp: expected an integer in [1, 1048576], found \"eight\"");
  doc = small_experiment();
  doc["parallelism"]["tp"] = 8.5;
  CHECK(error_for(doc) == kFile + ": /parallelism/tp: expected an integer in [1, 1048576], found 8.5");
  doc = small_experiment();
  doc["training"]["dtype"] = "bf17";
  CHECK(error_for(doc) == kFile + ": /training/dtype: expected one of fp32, tf32, bf16, bf16-sr, fp16, fp8, found \"bf17\"");
}

TEST_CASE("config: a missing required field is named") {
  auto doc = small_experiment();
  doc["training"].erase("seq_len");
  CHECK(error_for(doc) == kFile + ": /training/seq_len: missing required field (expected an integer in [1, 16777216])");
  doc = small_experiment();
  doc["cluster"].erase("count");
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /cluster/count: missing required field"));
  doc = small_experiment();
  doc.erase("parallelism");
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /parallelism: missing required field"));
}

TEST_CASE("config: out-of-range values are rejected") {
  auto doc = small_experiment();
  doc["training"]["global_batch"] = 0;
  CHECK(error_for(doc) == kFile + ": /training/global_batch: expected an integer in [1, 16777216], found 0");
  doc = small_experiment();
  doc["parallelism"]["zero"] = 4;
  CHECK(error_for(doc) == kFile + ": /parallelism/zero: expected an integer in [0, 3], found 4");
  doc = small_experiment();
  doc["cluster"]["count"] = 10000000;  // beyond 2^20 instances, where ClusterSpec::chips() would overflow
  CHECK(error_for(doc) == kFile + ": /cluster/count: expected an integer in [1, 1048576], found 10000000");
  doc = small_experiment();
  doc["cluster"]["calibration"] = {{"matmul_efficiency", 1.2}};
  CHECK(error_for(doc) == kFile + ": /cluster/calibration/matmul_efficiency: expected a number in [0.001, 1], found 1.2");
}

TEST_CASE("config: tp must divide the attention heads") {
  auto doc = small_experiment();
  doc["parallelism"]["tp"] = 12;  // 12 x 1 x 4 = 48 ranks would also mismatch; heads are checked first
  CHECK(error_for(doc) == kFile + ": /parallelism/tp: 12 does not divide heads (32)");
}

TEST_CASE("config: tp above the KV heads must be a multiple of them") {
  auto doc = small_experiment();
  doc["model"]["heads"] = 48;       // hidden 4096 / 48 is not whole: use a shape where it is
  doc["model"]["hidden"] = 6144;
  doc["model"]["kv_heads"] = 12;
  doc["parallelism"]["tp"] = 8;     // divides 48 heads; 8 neither divides 12 nor is a multiple of 12
  CHECK(error_for(doc) == kFile + ": /parallelism/tp: 8 neither divides kv_heads (12) nor is a multiple of it");
}

TEST_CASE("config: tp x pp x dp must equal the cluster's ranks") {
  auto doc = small_experiment();
  doc["parallelism"]["dp"] = 2;  // 8 x 1 x 2 = 16, one trn1.32xlarge has 16 chips x 2 cores = 32
  CHECK(error_for(doc) == kFile + ": /parallelism: tp x pp x dp = 8 x 1 x 2 = 16 does not match the cluster's "
                                  "ranks (32 = 1 trn1.32xlarge x 32 ranks each)");
}

TEST_CASE("config: the global batch must split into dp x micro_batch") {
  auto doc = small_experiment();
  doc["training"]["global_batch"] = 66;
  doc["training"]["micro_batch"] = 2;
  CHECK(error_for(doc) == kFile + ": /training/global_batch: 66 is not divisible by dp x micro_batch = 4 x 2 = 8");
}

TEST_CASE("config: pp x virtual_stages chunks may not outnumber the layers when virtual stages are given") {
  auto doc = small_experiment();
  doc["parallelism"] = {{"tp", 8}, {"pp", 2}, {"dp", 2}, {"virtual_stages", 3}};
  // 2 x 3 = 6 chunks for 4 layers: two chunks would be empty.
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /parallelism/virtual_stages: pp x virtual_stages = 2 x 3 "
                                                       "= 6 model chunks exceed layers (4)"));
}

TEST_CASE("config: devices must be a whole number of instances") {
  auto doc = small_experiment();
  doc["cluster"] = {{"instance", "dgx-a100-80gb"}, {"devices", 12}};
  CHECK(error_for(doc) == kFile + ": /cluster/devices: 12 is not a whole number of dgx-a100-80gb instances (8 ranks each)");
}

TEST_CASE("config: an UltraServer instance count must be whole UltraServers") {
  auto doc = small_experiment();
  doc["cluster"] = {{"instance", "trn2u.48xlarge"}, {"count", 2}};
  CHECK(error_for(doc) == kFile + ": /cluster/count: 2 instances is not a whole number of UltraServers (4 instances each)");
}

TEST_CASE("config: an unknown preset lists the known ones") {
  auto doc = small_experiment();
  doc["cluster"]["instance"] = "trn9.huge";
  auto msg = error_for(doc);
  CHECK_THAT(msg, Catch::StartsWith(kFile + ": /cluster/instance: unknown instance preset \"trn9.huge\""));
  CHECK_THAT(msg, Catch::Contains("trn1.32xlarge"));
  doc = small_experiment();
  doc["model"] = "llama9";
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /model: unknown model preset \"llama9\""));
}

TEST_CASE("config: an override path that does not exist is named") {
  const auto msg = error_for(small_experiment(), {"parallelism.tpp=4"});
  CHECK_THAT(msg, Catch::StartsWith(kFile + ": --set parallelism.tpp=4: /parallelism/tpp does not exist"));
  CHECK_THAT(msg, Catch::Contains("tp"));
  CHECK_THAT(error_for(small_experiment(), {"parallelism.tp.x=4"}),
             Catch::StartsWith(kFile + ": --set parallelism.tp.x=4: /parallelism/tp is 8, it has no key \"x\""));
  CHECK_THAT(error_for(small_experiment(), {"parallelism"}),
             Catch::StartsWith(kFile + ": --set parallelism: expected PATH=VALUE"));
}

TEST_CASE("config: a bad override value goes through the same validation, naming the override") {
  CHECK(error_for(small_experiment(), {"parallelism.tp=eight"}) ==
        kFile + " (with --set parallelism.tp=eight): /parallelism/tp: expected an integer in [1, 1048576], found \"eight\"");
  CHECK(error_for(small_experiment(), {"parallelism.tp=12"}) ==
        kFile + " (with --set parallelism.tp=12): /parallelism/tp: 12 does not divide heads (32)");
}

TEST_CASE("config: an experiment that is not an object is rejected at the root") {
  CHECK(error_for(nlohmann::json::array()) == kFile + ": /: expected an experiment object, found an array");
}

TEST_CASE("config: a file that does not parse names the file") {
  const auto msg = input_error([] { trnsim::config::load_experiment("/nonexistent/x.json"); });
  CHECK(msg == "/nonexistent/x.json: cannot open file (No such file or directory)");
}

TEST_CASE("config: an unknown collective algorithm names its path and the accepted names") {
  auto doc = small_experiment();
  doc["network"] = {{"model", "flow"}, {"algorithm", "rign"}};
  const auto msg = error_for(doc);
  CHECK_THAT(msg, Catch::StartsWith(kFile + ": /network/algorithm: unknown collective algorithm 'rign'"));
  CHECK_THAT(msg, Catch::Contains("halving-doubling"));
}

TEST_CASE("config: expert parallelism and the MoE knobs on a dense model are errors, not ignored") {
  auto doc = small_experiment();
  doc["parallelism"]["ep"] = 2;
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /parallelism/ep: expert parallelism needs a mixture-of-experts"));
  doc = small_experiment();
  doc["training"]["moe_imbalance"] = 1.5;
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /training/moe_imbalance: a dense model"));
  doc = small_experiment();
  doc["model"]["shared_experts"] = 1;
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /model/shared_experts: a dense model"));
  // Context parallelism is simulated now (it was rejected by name as an unknown key): its ranks
  // count, tp 8 x cp 2 x dp 4 = 64 on the 32 ranks of one trn1.32xlarge.
  doc = small_experiment();
  doc["parallelism"]["cp"] = 2;
  CHECK_THAT(error_for(doc), Catch::StartsWith(kFile + ": /parallelism: tp x cp x pp x dp = 8 x 2 x 1 x 4 = 64 does "
                                                       "not match the cluster's 32 ranks"));
}
