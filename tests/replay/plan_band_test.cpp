// The band of predictions the unpublished fields allow: its candidates, its bounds checked
// against simulating every plan by hand, the prediction's own values among its candidates, and
// the prediction inside it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <vector>

#include "../workload/test_models.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/replay/plan_band.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/workload/memory.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// A small GPT on one trn1.2xlarge (2 NeuronCores, one rank each): runs in milliseconds.
replay::StepInput tiny_input(std::int64_t tp, std::int64_t dp) {
  replay::StepInput in;
  in.cluster.instance = config::load_instance("trn1.2xlarge");
  in.cluster.instances = 1;
  in.model = gpt(4, 256, 4, 1024);
  in.training = training(512, 8, 1);
  in.parallelism = parallelism(tp, 1, dp, tp > 1, Recompute::None);
  return in;
}

double step_seconds(const replay::StepInput& in) { return replay::simulate_step(in).timeline.step_time.to_seconds(); }

double peak_bytes(const replay::StepInput& in, const TrainingSpec& t, const ParallelismSpec& p) {
  return estimate_memory(in.model, t, p, in.software).peak().total();
}

// HBM per chip that gives each of the instance's ranks `bytes`.
void set_rank_capacity(replay::StepInput& in, double bytes) {
  const auto& chip = in.cluster.instance.chip;
  in.cluster.instance.chip.hbm_bytes = bytes * chip.physical_cores / replay::physical_cores_per_rank(chip);
}

// A plan with every band field set, as a user would write it.
replay::StepInput with_plan(replay::StepInput in, std::int64_t micro_batch, Recompute rc) {
  in.training.micro_batch = micro_batch;
  in.parallelism.recompute = rc;
  return in;
}

}  // namespace

TEST_CASE("plan band: candidates come in the documented order and keep the fields that are set") {
  // pp 2, 4 layers (2 per stage: Megatron-LM's v divides 2, so v = 2), batch 8, dp 1:
  // micro-batch 1, 2, 4, 8 divide 8 (16 does not); the micro-batches per pipeline are 8, 4, 2, 1,
  // a multiple of pp for the first three, so those also take v = 2; recompute 3 ways; zero only
  // 0 (dp = 1); sequence parallelism set off.
  const ModelSpec m = gpt(4, 256, 4, 1024);
  TrainingSpec t = training(128, 8, 1);
  t.micro_batch.reset();
  ParallelismSpec p = parallelism(1, 2, 1, false, Recompute::None);
  p.recompute.reset();
  p.virtual_stages.reset();
  p.schedule.reset();
  p.zero.reset();
  const auto c = replay::band_candidates(m, t, p);
  REQUIRE(c.size() == (2 + 2 + 2 + 1) * 3);
  // micro_batch outermost, then v, then recompute.
  CHECK(*c[0].training.micro_batch == 1);
  CHECK(*c[0].parallelism.virtual_stages == 1);
  CHECK(*c[0].parallelism.schedule == PipelineSchedule::OneFOneB);
  CHECK(*c[0].parallelism.recompute == Recompute::None);
  CHECK(*c[1].parallelism.recompute == Recompute::Selective);
  CHECK(*c[2].parallelism.recompute == Recompute::Full);
  CHECK(*c[3].parallelism.virtual_stages == 2);
  CHECK(*c[3].parallelism.schedule == PipelineSchedule::Interleaved);
  CHECK(*c[6].training.micro_batch == 2);
  CHECK(*c.back().training.micro_batch == 8);
  CHECK(*c.back().parallelism.virtual_stages == 1);
  for (const auto& x : c) {
    CHECK(*x.parallelism.zero == 0);
    CHECK(*x.parallelism.sequence_parallel == false);  // set in the file: kept
  }

  SECTION("a set schedule of 1f1b pins one chunk per rank; dp > 1 adds ZeRO-1; tp > 1 adds SP") {
    p.schedule = PipelineSchedule::OneFOneB;
    p.dp = 2;
    p.tp = 2;
    p.sequence_parallel.reset();
    const auto d = replay::band_candidates(m, t, p);
    // Per-replica batch 4: micro-batch 1, 2, 4; v = 1 only; 3 recompute x 2 zero x 2 SP
    // (tp 2 divides seq_len 128).
    REQUIRE(d.size() == 3 * 3 * 2 * 2);
    CHECK(*d[0].parallelism.zero == 0);
    CHECK(*d[0].parallelism.sequence_parallel == false);
    CHECK(*d[1].parallelism.sequence_parallel == true);
    CHECK(*d[2].parallelism.zero == 1);
    for (const auto& x : d) CHECK(*x.parallelism.virtual_stages == 1);
    // tp 3 does not divide seq_len 128: SP off only.
    p.tp = 3;
    CHECK(replay::band_candidates(m, t, p).size() == 3 * 3 * 2);
  }

  SECTION("a set interleaving takes only v >= 2, and drops micro-batches it cannot run") {
    // 12 layers on pp 2: 6 per stage, v in {2, 3, 6}; micro-batch 8 leaves 1 micro-batch per
    // pipeline, not a multiple of pp: out. 3 micro-batches x 3 v x 3 recompute.
    p.schedule = PipelineSchedule::Interleaved;
    const auto d = replay::band_candidates(gpt(12, 256, 4, 1024), t, p);
    REQUIRE(d.size() == 3 * 3 * 3);
    CHECK(*d[0].parallelism.virtual_stages == 2);
    CHECK(*d[3].parallelism.virtual_stages == 3);
    CHECK(*d[6].parallelism.virtual_stages == 6);
    CHECK(*d.back().training.micro_batch == 4);
    for (const auto& x : d) CHECK(*x.parallelism.schedule == PipelineSchedule::Interleaved);
    // 5 layers do not split evenly over pp 2: Megatron-LM would not interleave; the rule's v = 2.
    const auto e = replay::band_candidates(gpt(5, 256, 4, 1024), t, p);
    REQUIRE(e.size() == 3 * 3);
    for (const auto& x : e) CHECK(*x.parallelism.virtual_stages == 2);
    // Without a set schedule an uneven split is not interleaved at all.
    p.schedule.reset();
    for (const auto& x : replay::band_candidates(gpt(5, 256, 4, 1024), t, p))
      CHECK(*x.parallelism.virtual_stages == 1);
  }
}

TEST_CASE("plan band: the cap drops deep interleavings first, then the largest micro-batches") {
  SECTION("interleavings") {
    // 1440 layers on pp 2: 720 per stage, which has 29 divisors >= 2; with recompute null, v = 1
    // and those make 30 x 3 = 90 candidates. 48 / 3 = 16 values of v stay: 1 and the 15 smallest
    // divisors, 2 3 4 5 6 8 9 10 12 15 16 18 20 24 30.
    const ModelSpec m = gpt(1440, 256, 4, 1024);
    ParallelismSpec p = parallelism(1, 2, 1, false, Recompute::None);
    p.recompute.reset();
    p.virtual_stages.reset();
    p.schedule.reset();
    const auto c = replay::band_candidates(m, training(128, 8, 1), p);
    REQUIRE(c.size() == replay::kMaxBandCandidates);
    const std::vector<std::int64_t> expected = {1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20, 24, 30};
    for (std::size_t i = 0; i < c.size(); ++i) CHECK(*c[i].parallelism.virtual_stages == expected[i / 3]);
  }
  SECTION("micro-batches") {
    // dp 2, tp 2, batch 64: per-replica 32, micro-batch 1, 2, 4, 8, 16 x 3 recompute x 2 zero x 2
    // SP = 60 at v = 1 (pp 1); without 16: 4 x 12 = 48.
    TrainingSpec t = training(128, 64, 1);
    t.micro_batch.reset();
    ParallelismSpec p = parallelism(2, 1, 2, false, Recompute::None);
    p.recompute.reset();
    p.zero.reset();
    p.sequence_parallel.reset();
    const auto c = replay::band_candidates(gpt(4, 256, 4, 1024), t, p);
    REQUIRE(c.size() == 48);
    CHECK(*c.front().training.micro_batch == 1);
    CHECK(*c.back().training.micro_batch == 8);
  }
}

TEST_CASE("plan band: the bounds are the fastest and slowest fitting plans, as simulating each one shows") {
  // Null micro_batch and recompute; dp 2, so the per-replica batch is 4: micro-batch 1, 2, 4 x
  // recompute none, selective, full = 9 plans (zero and SP set: 0, off).
  replay::StepInput in = tiny_input(1, 2);
  in.training.micro_batch.reset();
  in.parallelism.recompute.reset();
  // The plans by hand, each run as a file with every field set would be.
  std::vector<replay::StepInput> plans;
  for (const std::int64_t b : {1, 2, 4})
    for (const Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full})
      plans.push_back(with_plan(in, b, rc));

  SECTION("everything fits") {
    const auto band = replay::plan_band(in);
    CHECK(band.candidates == 9);
    CHECK(band.fit == 9);
    CHECK(band.simulated == 9);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& each : plans) {
      lo = std::min(lo, step_seconds(each));
      hi = std::max(hi, step_seconds(each));
    }
    CHECK(band.fastest_s == lo);
    CHECK(band.slowest_s == hi);
    CHECK(lo < hi);  // recomputing adds compute: the band is not a point

    // The prediction (the rule: here micro-batch 1 and the least recomputation that fits, none)
    // lies inside; so does the prediction under software defaults of micro-batch 4 and full
    // recomputation, while the band, whose candidates already hold those values, stays the same.
    const double predicted = step_seconds(in);
    CHECK(band.fastest_s <= predicted);
    CHECK(predicted <= band.slowest_s);
    replay::StepInput defaults = in;
    defaults.software.defaults.micro_batch = 4;
    defaults.software.defaults.recompute = Recompute::Full;
    const double predicted_defaults = step_seconds(defaults);
    CHECK(predicted_defaults != predicted);
    CHECK(band.fastest_s <= predicted_defaults);
    CHECK(predicted_defaults <= band.slowest_s);
    const auto same = replay::plan_band(defaults);
    CHECK(same.fastest_s == band.fastest_s);
    CHECK(same.slowest_s == band.slowest_s);
    CHECK(same.fit == band.fit);

    // Handing over the prediction's run (analytic) saves its replay and changes nothing.
    const replay::StepRun run = replay::simulate_step(in);
    const auto reused = replay::plan_band(in, &run);
    CHECK(reused.fastest_s == band.fastest_s);
    CHECK(reused.slowest_s == band.slowest_s);
    CHECK(reused.simulated == band.simulated);
  }

  SECTION("recompute none does not fit: the band is over the plans that do") {
    // Capacity between the micro-batch-1 needs under full and none recompute: every
    // recompute-none plan (the larger micro-batches hold more) is over it.
    const double none = peak_bytes(in, plans[0].training, plans[0].parallelism);
    const double full = peak_bytes(in, plans[2].training, plans[2].parallelism);
    REQUIRE(full < none);
    set_rank_capacity(in, (none + full) / 2);
    const double capacity = replay::rank_memory_capacity(in.cluster);
    std::size_t fit = 0;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (auto& each : plans) {
      each.cluster = in.cluster;
      if (peak_bytes(each, each.training, each.parallelism) > capacity) continue;
      ++fit;
      lo = std::min(lo, step_seconds(each));
      hi = std::max(hi, step_seconds(each));
    }
    REQUIRE(fit >= 1);  // plans[2] at least
    REQUIRE(fit < 9);
    const auto band = replay::plan_band(in);
    CHECK(band.fit == fit);
    CHECK(band.simulated == fit);
    CHECK(band.fastest_s == lo);
    CHECK(band.slowest_s == hi);
    REQUIRE(band.fastest);
    CHECK(*band.fastest->parallelism.recompute != Recompute::None);
    const double predicted = step_seconds(in);
    CHECK(band.fastest_s <= predicted);
    CHECK(predicted <= band.slowest_s);
  }

  SECTION("nothing fits: no band") {
    set_rank_capacity(in, 1.0);
    const auto band = replay::plan_band(in);
    CHECK(band.candidates == 9);
    CHECK(band.fit == 0);
    CHECK(band.empty());
    CHECK(!band.fastest);
  }
}

TEST_CASE("plan band: with every field set it is the prediction alone, fitting or not") {
  replay::StepInput in = tiny_input(2, 1);
  const double predicted = step_seconds(in);
  auto band = replay::plan_band(in);
  CHECK(band.candidates == 1);
  CHECK(band.fit == 1);
  CHECK(band.fastest_s == predicted);
  CHECK(band.slowest_s == predicted);
  // The plan the file states ran: it stays the band even when its estimate is over capacity.
  set_rank_capacity(in, 1.0);
  band = replay::plan_band(in);
  CHECK(band.fit == 0);
  CHECK(band.simulated == 1);
  CHECK(band.fastest_s == step_seconds(in));
  CHECK(band.slowest_s == band.fastest_s);
}

TEST_CASE("plan band: the prediction's own values are candidates, a software default outside the list too") {
  SECTION("candidates: selective-op and zero 3 join the lists") {
    // tiny_input(1, 2) with recompute and zero null: recompute none, selective, full and zero 0, 1
    // (dp 2) make 3 x 2 = 6 plans; a prediction with selective-op and zero 3 (TorchTitan's
    // defaults) adds one value to each list: 4 x 3 = 12, its own plan last.
    replay::StepInput in = tiny_input(1, 2);
    in.parallelism.recompute.reset();
    in.parallelism.zero.reset();
    CHECK(replay::band_candidates(in.model, in.training, in.parallelism).size() == 3 * 2);
    replay::PlanCandidate own{in.training, in.parallelism};
    own.parallelism.recompute = Recompute::SelectiveOp;
    own.parallelism.zero = 3;
    own.parallelism.virtual_stages = 1;
    own.parallelism.schedule = PipelineSchedule::OneFOneB;
    own.parallelism.sequence_parallel = false;
    const auto c = replay::band_candidates(in.model, in.training, in.parallelism, &own);
    REQUIRE(c.size() == 4 * 3);
    CHECK(*c.back().parallelism.recompute == Recompute::SelectiveOp);
    CHECK(*c.back().parallelism.zero == 3);
  }

  SECTION("band: only full and the default selective-op fit; the prediction is the fastest") {
    // The software's default recompute selective-op, micro-batch 1 set. HBM between the needs
    // under selective-op and under selective: of none, selective, full only full fits, so the
    // old band was full alone and the prediction (selective-op, which reruns part of the forward,
    // faster than full, which reruns all of it) lay below it.
    replay::StepInput in = tiny_input(1, 2);
    in.parallelism.recompute.reset();
    in.software.defaults.recompute = Recompute::SelectiveOp;
    const auto need = [&](Recompute rc) {
      const auto each = with_plan(in, 1, rc);
      return peak_bytes(each, each.training, each.parallelism);
    };
    REQUIRE(need(Recompute::Full) < need(Recompute::SelectiveOp));
    REQUIRE(need(Recompute::SelectiveOp) < need(Recompute::Selective));
    REQUIRE(need(Recompute::Selective) <= need(Recompute::None));
    set_rank_capacity(in, (need(Recompute::SelectiveOp) + need(Recompute::Selective)) / 2);
    const double predicted = step_seconds(in);
    auto full = with_plan(in, 1, Recompute::Full);
    const double full_s = step_seconds(full);
    REQUIRE(predicted < full_s);

    const auto band = replay::plan_band(in);
    CHECK(band.candidates == 4);  // none, selective, full, selective-op
    CHECK(band.fit == 2);         // full, selective-op
    CHECK(band.fastest_s == predicted);
    CHECK(band.slowest_s == full_s);
    REQUIRE(band.fastest);
    CHECK(*band.fastest->parallelism.recompute == Recompute::SelectiveOp);
  }
}
