// trnsim sweep and trnsim merge as a user runs them: counts worked out by hand, and merged shards
// printing and writing byte for byte what the unsharded sweep does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <fmt/core.h>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

// tiny-trn1: 2 ranks, 4 heads, 2 layers, 8 sequences per step. --tp 1,2 --pp 1,2 --micro-batch 1,2,3:
// 12 points. tp 2 x pp 2 = 4 does not divide 2 ranks: 3 points. Of the other three (tp, pp) pairs
// (dp 2, 1, 1), micro-batch 3 never divides the batch (8 / (dp x 3)): 3 points. 6 simulated.
const std::string kAxes = "--tp 1,2 --pp 1,2 --micro-batch 1,2,3";

// `trnsim sweep` on tiny-trn1 with the grid and `more` options.
Result sweep(const std::string& more) { return run(fmt::format("sweep '{}' {} {}", example("tiny-trn1.json"), kAxes, more)); }

}  // namespace

TEST_CASE("cli sweep: counts plans by status and rule, and ranks the simulated ones") {
  const auto r = sweep("--top 3");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("plans: 12 enumerated; 6 invalid, 0 out of memory, 6 simulated"));
  CHECK_THAT(r.out, Catch::Contains("3  tp x pp does not divide the cluster's ranks"));
  CHECK_THAT(r.out, Catch::Contains("3  global_batch is not divisible by dp x micro_batch"));
  CHECK_THAT(r.out, Catch::Contains("fastest 3 of 6"));
}

TEST_CASE("cli sweep: merged shards print and write what the unsharded sweep does") {
  const fs::path whole_csv = scratch("whole.csv"), merged_csv = scratch("merged.csv");
  const fs::path p0 = scratch("p0.json"), p1 = scratch("p1.json");
  const auto whole = sweep(fmt::format("--threads 2 --csv '{}'", whole_csv.string()));
  const auto s0 = sweep(fmt::format("--threads 1 --shard 0/2 --json '{}'", p0.string()));
  const auto s1 = sweep(fmt::format("--shard 1/2 --json '{}'", p1.string()));
  REQUIRE(whole.code == 0);
  REQUIRE(s0.code == 0);
  REQUIRE(s1.code == 0);
  const auto merged = run(fmt::format("merge '{}' '{}' --csv '{}'", p1.string(), p0.string(), merged_csv.string()));
  REQUIRE(merged.code == 0);
  CHECK(merged.out == whole.out);
  CHECK(slurp(merged_csv) == slurp(whole_csv));
  // 12 points and a header line.
  const std::string csv = slurp(whole_csv);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 13);

  const auto missing = run(fmt::format("merge '{}'", p0.string()));
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("shard 1/2 is missing"));
  for (const fs::path& p : {whole_csv, merged_csv, p0, p1}) fs::remove(p);
}

TEST_CASE("cli sweep: --cp sweeps context parallelism, dp derived over tp x pp x cp") {
  // tiny-trn1 (2 ranks, seq_len 128) at tp 1: cp 1 leaves dp 2, cp 2 dp 1 (128 splits into
  // 2 cp = 4 chunks); cp 3 does not divide the 2 ranks. 3 points: 1 invalid, 2 simulated.
  const fs::path csv = scratch("cp.csv");
  const auto r = run(fmt::format("sweep '{}' --tp 1 --cp 1,2,3 --csv '{}'", example("tiny-trn1.json"), csv.string()));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("plans: 3 enumerated; 1 invalid, 0 out of memory, 2 simulated"));
  CHECK_THAT(r.out, Catch::Contains("1  tp x pp x cp does not divide the cluster's ranks"));
  CHECK_THAT(slurp(csv), Catch::Contains("parallelism.cp"));
  fs::remove(csv);
  CHECK(run(fmt::format("sweep '{}' --cp 0", example("tiny-trn1.json"))).code == 2);
  CHECK(run(fmt::format("sweep '{}' --cp 2 --vary parallelism.cp=1,2", example("tiny-trn1.json"))).code == 2);
}

TEST_CASE("cli sweep: --recompute takes TorchTitan's modes") {
  // tiny-trn1 (2 layers) at its own plan: one point per mode given, all simulated; the CSV's
  // recompute column names each mode. An n outside 2 .. 2^20 is an input error saying what is expected.
  const fs::path csv = scratch("recompute.csv");
  const auto r = run(fmt::format("sweep '{}' --recompute none,selective-op,full-every-2,full --csv '{}'",
                                 example("tiny-trn1.json"), csv.string()));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("plans: 4 enumerated; 0 invalid, 0 out of memory, 4 simulated"));
  const std::string table = slurp(csv);
  for (const char* mode : {",none,", ",selective-op,", ",full-every-2,", ",full,"}) {
    CHECK_THAT(table, Catch::Contains(mode));
  }
  fs::remove(csv);
  // Any n from 2 to 2^20: full-every-5 on 2 layers is none in effect, yet named as given.
  const auto five = run(fmt::format("sweep '{}' --recompute full-every-5 --csv '{}'", example("tiny-trn1.json"), csv.string()));
  REQUIRE(five.code == 0);
  CHECK_THAT(slurp(csv), Catch::Contains(",full-every-5,"));
  fs::remove(csv);
  for (const char* n : {"0", "1", "x", "2097152"}) {
    const auto bad = run(fmt::format("sweep '{}' --recompute full-every-{}", example("tiny-trn1.json"), n));
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains(fmt::format("--recompute: expected none, selective, selective-op, full or "
                                                    "full-every-N with N an integer from 2 to 1048576 (N = 1 is full), "
                                                    "found \"full-every-{}\"", n)));
  }
}

TEST_CASE("cli sweep: bad options are input errors (exit 2)") {
  CHECK(sweep("--shard 2/2").code == 2);
  CHECK(sweep("--sp maybe").code == 2);
  CHECK(sweep("--vary cluster.count").code == 2);
  const auto bad = run(fmt::format("sweep '{}' --tp 0", example("tiny-trn1.json")));
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--tp: expected integers in [1, 1048576], found 0"));
  // Out of range before any conversion: no silent clamp to the largest integer.
  CHECK(sweep("--dp 99999999999999999999").code == 2);
  // --shard: two plain integers; an overflowing N is not read as 1.
  CHECK(sweep("--shard 0/4294967297").code == 2);
  CHECK(sweep("--shard ' 0/2'").code == 2);
  CHECK(sweep("--shard +1/4").code == 2);
}

namespace {

// "about X GB" of `trnsim run`'s step-size refusal: the estimate of the experiment's own plan.
std::string run_estimate() {
  const auto r = run(fmt::format("run '{}' --max-memory 1kB", example("tiny-trn1.json")));
  const std::string key = "the step would need about ";
  const std::size_t at = r.err.find(key);
  if (r.code != 2 || at == std::string::npos) return "(no estimate: " + r.err + ")";
  const std::size_t from = at + key.size();
  return r.err.substr(from, r.err.find(" of memory", from) - from);
}

}  // namespace

TEST_CASE("cli sweep: --max-memory refuses a sweep whose largest plan times the threads exceeds it, --force runs it") {
  // --recompute none,selective: the experiment's plan twice, and the step-size estimate does not
  // depend on recompute, so each plan needs what `trnsim run` estimates for it (X), and --threads
  // 2 simulates both at once.
  const std::string x = run_estimate();
  const std::string sweep_args = fmt::format("sweep '{}' --recompute none,selective", example("tiny-trn1.json"));
  const auto two = run(sweep_args + " --threads 2 --max-memory 1kB");
  INFO(two.err);
  CHECK(two.code == 2);
  CHECK_THAT(two.err, Catch::StartsWith("error: the sweep of ") && Catch::Contains("(2 points) would need about "));
  CHECK_THAT(two.err, Catch::Contains("its largest plan (tp 2, pp 1, dp 1, micro-batch 1) about " + x + " to simulate"));
  CHECK_THAT(two.err, Catch::Contains("x 2 simulated at once (--threads)"));
  CHECK_THAT(two.err, Catch::Contains("more than the limit of 1e-06 GB (--max-memory") && Catch::Contains("--force"));
  // One thread: one plan at a time, whatever the number of plans.
  CHECK_THAT(run(sweep_args + " --threads 1 --max-memory 1kB").err, Catch::Contains("x 1 simulated at once"));
  const auto forced = run(sweep_args + " --threads 2 --max-memory 1kB --force");
  CHECK(forced.code == 0);
  CHECK_THAT(forced.out, Catch::Contains("plans: 2 enumerated; 0 invalid, 0 out of memory, 2 simulated"));
  // A limit above the estimate lets it run (1 TB: far above a tiny model's steps).
  CHECK(run(sweep_args + " --max-memory 1TB").code == 0);
}
