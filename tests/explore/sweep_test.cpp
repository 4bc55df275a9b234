// trnsim sweep: the enumeration and its pruning counted by hand on a small grid, each simulated
// point equal to a plain run of the same plan, and the output independent of threads and shards.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/config/experiment.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/error.hpp"
#include "trnsim/explore/sweep.hpp"
#include "trnsim/explore/sweep_json.hpp"
#include "trnsim/explore/sweep_report.hpp"
#include "trnsim/replay/step_simulation.hpp"

using namespace trnsim;
using nlohmann::json;

namespace {

// 32 ranks (one trn1.32xlarge); a 4-layer model with 8 heads; 32 sequences per step.
json sweep_experiment() {
  return json::parse(R"({
    "name": "sweep-test",
    "cluster": {"instance": "trn1.32xlarge", "count": 1},
    "model": {"name": "small", "layers": 4, "hidden": 256, "heads": 8, "kv_heads": 8, "ffn_hidden": 1024,
              "vocab": 1024, "mlp": "gelu", "norm": "layernorm"},
    "training": {"seq_len": 128, "global_batch": 32, "micro_batch": 1, "dtype": "bf16", "optimizer": "adamw"},
    "parallelism": {"tp": 1, "pp": 1, "dp": 32, "sequence_parallel": false, "zero": 0, "schedule": "1f1b",
                    "recompute": "none"}
  })");
}

explore::SweepAxes grid() {
  explore::SweepAxes a;
  a.tp = {1, 2, 3, 4, 8};
  a.pp = {1, 2, 4, 8};
  a.micro_batch = {1, 2};
  return a;
}

explore::SweepResult sweep(const explore::SweepAxes& axes, int threads = 1, int shard = 0, int shards = 1) {
  explore::SweepOptions o;
  o.threads = threads;
  o.shard = shard;
  o.shards = shards;
  return explore::run_sweep(sweep_experiment(), "sweep-test.json", axes, o);
}

}  // namespace

TEST_CASE("sweep: enumeration and pruning counts match a hand count", "[explore][sweep]") {
  // 5 tp x 4 pp x 2 micro-batch = 40 points, dp derived as 32 / (tp x pp).
  // - tp 3: 3 x pp (3, 6, 12, 24) never divides 32: 4 pp x 2 mb = 8 points; tp 8, pp 8: 64 does
  //   not divide 32: 2 more. "tp x pp does not divide the cluster's ranks": 10.
  // - pp 8 > 4 layers with tp 1, 2, 4 (tp x pp = 8, 16, 32 divide 32): 3 x 2 = 6, "pp exceeds layers".
  // - The 12 remaining (tp, pp) pairs give dp 32 / (tp x pp); micro-batch 2 needs dp x 2 to
  //   divide 32, false only for dp 32 (tp 1, pp 1): 1 point, "global_batch is not divisible ...".
  // - Valid: 12 x 2 - 1 = 23; the tiny model fits every rank's HBM, so all 23 are simulated.
  const explore::SweepResult r = sweep(grid());
  REQUIRE(r.summary.points == 40);
  REQUIRE(r.outcomes.size() == 40);
  std::map<std::string, int> invalid;
  int simulated = 0, oom = 0;
  for (const auto& o : r.outcomes) {
    if (o.status == explore::PlanStatus::Invalid) ++invalid[o.reason];
    if (o.status == explore::PlanStatus::Simulated) ++simulated;
    if (o.status == explore::PlanStatus::OutOfMemory) ++oom;
  }
  CHECK(invalid["tp x pp does not divide the cluster's ranks"] == 10);
  CHECK(invalid["pp exceeds layers"] == 6);
  CHECK(invalid["global_batch is not divisible by dp x micro_batch"] == 1);
  CHECK(invalid.size() == 3);
  CHECK(simulated == 23);
  CHECK(oom == 0);
  // Enumeration order: tp outermost, micro-batch innermost. Point 2 x 4 x 2 + 1 x 2 + 1 = 19 is
  // tp 3, pp 2, mb 2; point 39 is tp 8, pp 8, mb 2.
  CHECK(r.outcomes[19].tp == 3);
  CHECK(r.outcomes[19].pp == 2);
  CHECK(r.outcomes[19].micro_batch == 2);
  CHECK(r.outcomes[39].tp == 8);
  CHECK(r.outcomes[39].pp == 8);
  // dp derived: tp 2, pp 4 (point 1 x 8 + 2 x 2 = 12) runs dp 32 / 8 = 4.
  CHECK(r.outcomes[12].dp == 4);
  CHECK(r.outcomes[12].status == explore::PlanStatus::Simulated);
}

TEST_CASE("sweep: a simulated point predicts what trnsim run predicts for its plan", "[explore][sweep]") {
  explore::SweepAxes a;
  a.tp = {2};
  a.pp = {2};
  a.recompute = {workload::Recompute::Selective};
  const explore::SweepResult r = sweep(a);
  REQUIRE(r.outcomes.size() == 1);
  REQUIRE(r.outcomes[0].status == explore::PlanStatus::Simulated);
  const config::Experiment ex = config::parse_experiment(
      sweep_experiment(), "sweep-test.json",
      {"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=8", "parallelism.recompute=\"selective\""});
  const replay::StepRun run = replay::simulate_step(config::step_input(ex));
  CHECK(r.outcomes[0].step_time_s == run.timeline.step_time.to_seconds());
  CHECK(r.outcomes[0].dp == 8);
  // The breakdown's parts add up to the step time.
  double sum = 0;
  for (double part : r.outcomes[0].breakdown) sum += part;
  CHECK(sum == Approx(r.outcomes[0].step_time_s).epsilon(1e-9));
}

TEST_CASE("sweep: out-of-memory points are those whose estimate exceeds the rank's HBM", "[explore][sweep]") {
  // 0.05 GiB of HBM per chip, 25.6 MiB a rank (2 NeuronCores a chip): the model's ~3.4 M
  // parameters at 16 bytes of weights, gradients and Adam state are 55 MB unsharded (tp x pp = 1),
  // so some plans cannot fit and others (tp x pp = 32: 1.7 MB) can. The invariant holds whichever.
  explore::SweepAxes a = grid();
  a.overrides = {"cluster.chip.hbm_GiB=0.05"};
  const explore::SweepResult r = sweep(a);
  int oom = 0;
  for (const auto& o : r.outcomes) {
    if (o.status == explore::PlanStatus::OutOfMemory) {
      ++oom;
      CHECK(o.peak_memory_bytes > o.capacity_bytes);
      CHECK(o.detail.find("needs") != std::string::npos);
    }
    if (o.status == explore::PlanStatus::Simulated) CHECK(o.peak_memory_bytes <= o.capacity_bytes);
  }
  CHECK(oom > 0);
  CHECK(r.outcomes[12].status == explore::PlanStatus::Simulated);  // tp 2, pp 4: 55 MB / 8 fits
}

TEST_CASE("sweep: the output is the same on 1 and 2 threads, and merged shards equal the whole", "[explore][sweep]") {
  const explore::SweepResult one = sweep(grid(), 1);
  const explore::SweepResult two = sweep(grid(), 2);
  CHECK(explore::to_json(one).dump() == explore::to_json(two).dump());

  std::vector<explore::SweepResult> parts;
  std::vector<std::string> names;
  for (int s : {2, 0, 1}) {  // any order
    const explore::SweepResult part = sweep(grid(), 2, s, 3);
    // 40 points over 3 shards: 14, 13, 13 (indices s, s + 3, ...).
    CHECK(part.outcomes.size() == (s == 0 ? 14U : 13U));
    // Through JSON, as `trnsim merge` reads them.
    parts.push_back(explore::sweep_from_json(json::parse(explore::to_json(part).dump()), "part" + std::to_string(s)));
    names.push_back("part" + std::to_string(s));
  }
  const explore::SweepResult merged = explore::merge_shards(parts, names);
  CHECK(explore::to_json(merged).dump() == explore::to_json(one).dump());
  CHECK(explore::format_sweep(merged, 5) == explore::format_sweep(one, 5));
  CHECK(explore::sweep_csv(merged) == explore::sweep_csv(one));

  parts.pop_back();
  names.pop_back();
  CHECK_THROWS_WITH(explore::merge_shards(parts, names), Catch::Contains("shard 1/3 is missing"));
}

TEST_CASE("sweep: --vary takes the product with the plans, outermost", "[explore][sweep]") {
  explore::SweepAxes a;
  a.tp = {1, 2};
  a.vary = {{"cluster.count", {"1", "2"}}};
  const explore::SweepResult r = sweep(a);
  // 2 counts x 2 tp = 4 points; dp = 32 x count / tp: 32, 16, then 64 (global_batch 32 is not
  // divisible by 64 x 1: invalid) and 32.
  REQUIRE(r.outcomes.size() == 4);
  CHECK(r.outcomes[0].dp == 32);
  CHECK(r.outcomes[1].dp == 16);
  CHECK(r.outcomes[2].dp == 64);
  CHECK(r.outcomes[2].status == explore::PlanStatus::Invalid);
  CHECK(r.outcomes[3].dp == 32);
  CHECK(r.outcomes[3].vary == std::vector<std::string>{"2"});
  CHECK(r.outcomes[3].status == explore::PlanStatus::Simulated);
}

TEST_CASE("sweep: bad axes and bad parts are input errors", "[explore][sweep]") {
  explore::SweepAxes a;
  a.zero = {4};
  CHECK_THROWS_WITH(sweep(a), Catch::Contains("--zero: expected 0, 1, 2 or 3 (FSDP), found 4"));
  a = {};
  a.vary = {{"parallelism.nope", {"1"}}};
  CHECK_THROWS_AS(sweep(a), InputError);
  json part = explore::to_json(sweep(explore::SweepAxes{}));
  part["schema_version"] = 99;
  CHECK_THROWS_WITH(explore::sweep_from_json(part, "p.json"), Catch::Contains("p.json: /schema_version: expected 1, found 99"));
}

TEST_CASE("sweep --search: every plan of the cluster, counted by hand", "[explore][search]") {
  // 32 ranks, 4 layers, 8 heads, 32 sequences. (tp, pp): tp a divisor of 32, pp a divisor of
  // 32 / tp up to 4: 15 pairs. dp = 32 / (tp x pp); micro-batch every divisor of 32 / dp = tp x pp;
  // v = 2 besides 1 only when pp = 2 and the tp x pp / mb micro-batches are even (4 / pp = 1
  // leaves pp 4 no v > 1); recompute 3 modes; zero 0 and 1 when dp > 1.
  //   (1,1) 1 mb x 3 x 2 = 6      (1,2) (2 + 1) x 3 x 2 = 18   (1,4) 3 x 3 x 2 = 18
  //   (2,1) 2 x 6 = 12            (2,2) (2 + 2 + 1) x 6 = 30   (2,4) 4 x 6 = 24
  //   (4,1) 3 x 6 = 18            (4,2) (3 x 2 + 1) x 6 = 42   (4,4) 5 x 6 = 30
  //   (8,1) 4 x 6 = 24            (8,2) (4 x 2 + 1) x 6 = 54   (8,4) 6 x 3 (dp 1) = 18
  //   (16,1) 5 x 6 = 30           (16,2) (5 x 2 + 1) x 3 = 33  (32,1) 6 x 3 = 18
  // 375 plans; tp 16 and 32 do not divide the 8 heads: 30 + 33 + 18 = 81 invalid.
  explore::SweepOptions o;
  o.search = true;
  o.keep = 3;
  const explore::SweepResult r = explore::run_sweep(sweep_experiment(), "sweep-test.json", explore::SweepAxes{}, o);
  REQUIRE(r.outcomes.size() == 375);
  int heads = 0, other_invalid = 0;
  for (const auto& p : r.outcomes)
    if (p.status == explore::PlanStatus::Invalid) ++(p.reason == "tp does not divide heads" ? heads : other_invalid);
  CHECK(heads == 81);
  CHECK(other_invalid == 0);
}

TEST_CASE("sweep --search: pruning by the compute bound keeps the exact ranking", "[explore][search]") {
  explore::SweepAxes a;
  a.recompute = {workload::Recompute::Selective};  // a third of the plans, same questions
  explore::SweepOptions pruned;
  pruned.search = true;
  pruned.keep = 3;
  explore::SweepOptions full = pruned;
  full.keep = 1000000;  // never reached: every plan that fits is replayed
  const explore::SweepResult p = explore::run_sweep(sweep_experiment(), "sweep-test.json", a, pruned);
  const explore::SweepResult f = explore::run_sweep(sweep_experiment(), "sweep-test.json", a, full);
  const auto best_p = explore::ranked(p), best_f = explore::ranked(f);
  REQUIRE(best_p.size() >= 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(best_p[k]->index == best_f[k]->index);
    CHECK(best_p[k]->step_time_s == best_f[k]->step_time_s);
  }
  // The bound is a bound: no replay is shorter than it. And every pruned plan's bound, hence its
  // step time in the full search, exceeds the third fastest.
  std::size_t pruned_count = 0;
  for (std::size_t i = 0; i < f.outcomes.size(); ++i) {
    if (f.outcomes[i].status == explore::PlanStatus::Simulated)
      CHECK(f.outcomes[i].step_time_s >= f.outcomes[i].lower_bound_s);
    if (p.outcomes[i].status != explore::PlanStatus::Pruned) continue;
    ++pruned_count;
    CHECK(p.outcomes[i].lower_bound_s > best_p[2]->step_time_s);
    CHECK(f.outcomes[i].step_time_s > best_f[2]->step_time_s);
  }
  CHECK(pruned_count > 0);
  // The same on two threads (replays run in waves of two, the extra ones discarded).
  pruned.threads = 2;
  CHECK(explore::to_json(explore::run_sweep(sweep_experiment(), "sweep-test.json", a, pruned)).dump() ==
        explore::to_json(p).dump());
  // No shards: the pruning needs the whole search.
  pruned.shards = 2;
  CHECK_THROWS_AS(explore::run_sweep(sweep_experiment(), "sweep-test.json", a, pruned), InputError);
}

TEST_CASE("sweep: --vary may not repeat a path or name a plan field the sweep sets", "[explore][sweep]") {
  explore::SweepAxes a;
  a.vary = {{"training.seq_len", {"128", "256"}}, {"training.seq_len", {"64"}}};
  CHECK_THROWS_WITH(sweep(a), Catch::Contains("--vary training.seq_len: given twice"));
  a.vary = {{"parallelism.tp", {"1", "2"}}};
  a.tp = {2};
  CHECK_THROWS_WITH(sweep(a), Catch::Contains("--vary parallelism.tp: the sweep sets this plan field itself"));
  a.tp.clear();
  CHECK_NOTHROW(sweep(a));  // tp not swept: varying it is the one way it changes
  explore::SweepOptions o;
  o.search = true;  // the search sets every plan field
  CHECK_THROWS_AS(explore::run_sweep(sweep_experiment(), "sweep-test.json", a, o), InputError);
}

TEST_CASE("sweep --search: a given tp that does not divide the ranks is counted invalid", "[explore][search]") {
  explore::SweepAxes a;
  a.tp = {3};  // 32 ranks: no pp makes tp x pp divide them
  explore::SweepOptions o;
  o.search = true;
  const explore::SweepResult r = explore::run_sweep(sweep_experiment(), "sweep-test.json", a, o);
  // pp 1; no dp, so one micro-batch value, v 1 and zero 0; the 3 recompute modes: 3 points.
  REQUIRE(r.outcomes.size() == 3);
  for (const auto& p : r.outcomes) {
    CHECK(p.status == explore::PlanStatus::Invalid);
    CHECK(p.reason == "tp x pp does not divide the cluster's ranks");
  }
}

TEST_CASE("sweep: merge refuses parts of different sweeps and malformed parts", "[explore][sweep]") {
  explore::SweepAxes a;
  a.tp = {1, 2};
  explore::SweepAxes b;
  b.micro_batch = {1, 2};
  // Same experiment, same point count (2), same shard count: only the definitions differ.
  const explore::SweepResult p0 = sweep(a, 1, 0, 2), p1 = sweep(b, 1, 1, 2);
  CHECK_THROWS_WITH(explore::merge_shards({p0, p1}, {"a0", "b1"}), Catch::Contains("b1: not a shard of the same sweep as a0: /definition/micro_batch: [1,2] against []"));
  CHECK_THROWS_WITH(explore::merge_shards({p0}, {"a0"}), Catch::Contains("shard 1/2 is missing"));

  json part = explore::to_json(sweep(a, 1, 0, 2));
  part["plans"][0]["vary"] = {"extra"};  // no --vary paths in this sweep
  CHECK_THROWS_WITH(explore::sweep_from_json(part, "p.json"),
                    Catch::Contains("p.json: /plans/0/vary: expected 0 values (one per --vary path), found 1"));
  part = explore::to_json(sweep(a, 1, 0, 2));
  part.erase("plans");
  CHECK_THROWS_WITH(explore::sweep_from_json(part, "p.json"), Catch::Contains("p.json: /plans: missing"));
  part = explore::to_json(sweep(a, 1, 0, 2));
  part["plans"][0]["index"] = 0.7;
  CHECK_THROWS_WITH(explore::sweep_from_json(part, "p.json"), Catch::Contains("/plans/0/index: expected a non-negative integer"));
  // Figures a sweep never writes: a plan ranked at -1 s or 0 s, a degree of 0, a negative memory, an
  // unknown recompute mode or ZeRO stage.
  const json simulated = explore::to_json(sweep(a, 1, 0, 2));
  REQUIRE(simulated["plans"][0]["status"] == "simulated");
  const std::vector<std::tuple<const char*, json, const char*>> edits = {
      {"step_time_s", -1.0, "/plans/0/step_time_s: expected a finite number > 0, found -1"},
      {"step_time_s", 0.0, "/plans/0/step_time_s: expected a finite number > 0, found 0"},
      {"tp", 0, "/plans/0/tp: expected an integer >= 1, found 0"},
      {"peak_memory_bytes", -5.0, "/plans/0/peak_memory_bytes: expected a finite number >= 0, found -5"},
      {"recompute", "bogus", "/plans/0/recompute: expected none, selective, selective-op, full or full-every-N, found \"bogus\""},
      {"zero", 4, "/plans/0/zero: expected 0, 1, 2 or 3, found 4"},
  };
  for (const auto& [key, value, needle] : edits) {
    part = simulated;
    part["plans"][0][key] = value;
    INFO(key);
    CHECK_THROWS_WITH(explore::sweep_from_json(part, "p.json"), Catch::Contains(needle));
  }
}
