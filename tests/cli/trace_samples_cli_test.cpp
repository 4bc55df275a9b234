// The hand-written samples in traces/ replayed end to end; each expected step time is derived by
// hand below (compute from the hardware file or the trace's measured times; communication from the
// closed form or from `trnsim collective`, which prices a collective alone, without the replay).
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "trace_run.hpp"

using namespace trnsim::test;
using nlohmann::json;

namespace {

std::string sample(const std::string& name) { return std::string(TRNSIM_TEST_SOURCE_DIR) + "/traces/" + name; }


// time(us) of `trnsim collective --instance I --ranks 4 all-reduce` at `bytes`, in seconds (printed
// to 0.1 us).
double all_reduce_s(const std::string& instance, long bytes) {
  const auto r = run("collective --instance " + instance + " --ranks 4 all-reduce -b " + std::to_string(bytes) + " -e " +
                     std::to_string(bytes));
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    long size = 0, count = 0;
    std::string type;
    double us = 0;
    if (line.empty() || line[0] == '#' || !(cols >> size >> count >> type >> us) || size != bytes) continue;
    return us * 1e-6;
  }
  FAIL("no row for " << bytes << " bytes in: " << r.out);
  return 0;
}

constexpr double kUs = 1e-6;

}  // namespace

TEST_CASE("trace samples: the 4-rank DP step on trn1, on trn2 and with measured times scaled") {
  const std::string ex = "run '" + sample("dp4-trn1.experiment.json") + "'";
  // Per rank: forward F (9.5e10 FLOPs, unshaped: at the full-tile peak x matmul_efficiency, plus
  // the task overhead), backward halves 1500 + 1500 us and AdamW 100 us (measured). Bucket 0's
  // all-reduce (8 MiB, time A) runs during backward_b (1500 us > A: hidden); bucket 1's follows
  // backward_b, exposed; AdamW waits for it: step = F + 1500 + 1500 + A + 100 us.
  SECTION("trn1: F = 9.5e10 / (190 TFLOPS / 2 cores x 0.4904) + 0 us = 2039.152 us") {
    const double a = all_reduce_s("trn1.32xlarge", 8388608);  // 285.7 us (halving-doubling)
    REQUIRE(a < 1500 * kUs);
    const json j = run_json(ex);
    CHECK(j["results"]["step_time_s"].get<double>() == Approx((1000 / 0.4904 + 3100) * kUs + a).margin(0.06 * kUs));
    CHECK(j["trace"]["measured_nodes"] == 12);
  }
  SECTION("on trn2: the FLOPs re-costed, F = 9.5e10 / (667 TFLOPS x 2 / 8 cores x 0.4904) + 0 us = 1161.735 us; measured kept") {
    const double a = all_reduce_s("trn2.48xlarge", 8388608);  // 269.1 us
    const json j = run_json(ex + " --set cluster.instance=trn2.48xlarge");
    CHECK(j["results"]["step_time_s"].get<double>() == Approx((569.715 / 0.4904 + 3100) * kUs + a).margin(0.06 * kUs));
    CHECK(j["trace"]["measured_nodes"] == 12);
    CHECK(j["trace"]["recorded_on"] == "trn1.32xlarge");
  }
  SECTION("--scale-durations compute=0.5: measured times halved (1550 us), F unchanged; A still hidden by 750 us") {
    const double a = all_reduce_s("trn1.32xlarge", 8388608);
    const json j = run_json(ex + " --scale-durations compute=0.5");
    CHECK(j["results"]["step_time_s"].get<double>() == Approx((1000 / 0.4904 + 1550) * kUs + a).margin(0.06 * kUs));
    CHECK(j["trace"]["duration_scale"] == 0.5);
  }
  SECTION("bad scale: exit 2 naming the option") {
    const auto r = run(ex + " --scale-durations compute=-1");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--scale-durations: expected compute=F with F a number > 0"));
  }
}

TEST_CASE("trace samples: the 8-rank TP+PP step (2 stages of TP 4, 2 micro-batches) on trn1") {
  // Stage 0 (ranks 0-3): F(mb0) [0, F], all-reduce [F, F+A], send mb0 [F+A, F+A+S] on the pipeline
  // stream while F(mb1) [F+A, 2F+A], all-reduce [2F+A, 2F+2A], send mb1 [2F+2A, 2F+2A+S].
  // Stage 1 (ranks 4-7): F(mb0) [F+A+S, 2F+A+S], all-reduce to 2F+2A+S; mb1 arrives at 2F+2A+S
  // too, F(mb1) to 3F+2A+S, all-reduce to 3F+3A+S = the step. F = 500 us (measured).
  // S, a 64 KiB send from rank r to r+4 (chip c to chip c+2 of the 4x4 torus: 2 NeuronLink hops),
  // by the closed form (net/closed_form.hpp) under runtime release 2.19 (trn1.32xlarge's software,
  // neuronx-distributed): launch 0.3 + message 0 + max(step 0, 65536 B / 48 GB/s, the NeuronLink's
  // 192 GB/s per chip each way over 4 links, below the 56.85 GB/s stream = 1.365) + 2 x 1.5 hop
  // latency = 4.665 us.
  const double a = all_reduce_s("trn1.32xlarge", 1048576);  // 93.6 us
  const json j = run_json("run '" + sample("tp4-pp2-trn1.experiment.json") + "'");
  CHECK(j["results"]["step_time_s"].get<double>() == Approx((3 * 500 + 4.665) * kUs + 3 * a).margin(0.2 * kUs));
  CHECK(j["trace"]["nodes"] == 40);
}

TEST_CASE("trace samples: a broken trace exits 2 naming the file, the rank and the node") {
  const fs::path bad = scratch("bad-trace.json"), ex = scratch("bad-trace-experiment.json");
  json doc = json::parse(slurp(sample("dp4-trn1.json")));
  doc["ranks"][2]["nodes"][3]["deps"] = {9};
  std::ofstream(bad) << doc.dump();
  std::ofstream(ex) << json{{"cluster", {{"instance", "trn1.32xlarge"}, {"count", 1}}}, {"workload", {{"trace", bad.string()}}}}.dump();
  const auto r = run("run '" + ex.string() + "'");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(bad.string() + ": rank 2 node 3 (backward_b): depends on node 9, which rank 2 does not have"));
  // More ranks than the cluster has.
  doc = json::parse(slurp(sample("dp4-trn1.json")));
  std::ofstream(bad) << doc.dump();
  const auto small = run("run '" + ex.string() + "' --set cluster.instance=trn1.2xlarge");
  CHECK(small.code == 2);
  CHECK_THAT(small.err, Catch::Contains(bad.string() + ": the trace has 4 ranks, the cluster (1 x trn1.2xlarge) 2"));
  // A trace experiment names no model: one that does is refused at the key.
  std::ofstream(ex) << json{{"cluster", {{"instance", "trn1.32xlarge"}, {"count", 1}}}, {"model", "llama2-7b"},
                            {"workload", {{"trace", sample("dp4-trn1.json")}}}}.dump();
  const auto both = run("run '" + ex.string() + "'");
  CHECK(both.code == 2);
  CHECK_THAT(both.err, Catch::Contains("/model: not with \"workload\": {\"trace\": ...} (the trace is the workload)"));
  fs::remove(bad);
  fs::remove(ex);
}
