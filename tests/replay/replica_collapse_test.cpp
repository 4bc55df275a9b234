// Symmetric replicas started as one network call (the analytic model's collapsed path) against
// one call per group (the reference path, StepInput::collapse_replicas off): the same replay.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trnsim/config/experiment.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/replay/step_simulation.hpp"

using namespace trnsim;

namespace {

// configs/examples/llama3.1-405b-trn2u.json (tp 16, pp 16, 128 micro-batches of 1 per replica)
// on `chips` trn2 chips: 16 per trn2u.48xlarge, 4 ranks per chip, dp = ranks / 256.
replay::StepInput llama405b(int chips) {
  const int dp = chips * 4 / 256;
  const auto ex = config::load_experiment(std::string(TRNSIM_TEST_SOURCE_DIR) + "/configs/examples/llama3.1-405b-trn2u.json",
                                          {"cluster.count=" + std::to_string(chips / 16), "parallelism.dp=" + std::to_string(dp),
                                           "training.global_batch=" + std::to_string(dp * 128), "network.model=analytic"});
  return config::step_input(ex);
}

void check_same_replay(int chips) {
  INFO(chips << " chips");
  replay::StepInput input = llama405b(chips);
  input.collapse_replicas = false;
  const replay::StepRun per_group = replay::simulate_step(input);
  input.collapse_replicas = true;
  const replay::StepRun collapsed = replay::simulate_step(input);
  // The invariant: one event at the slowest group's time is when the last of one call per group
  // ended, so every task starts and ends at the same picosecond.
  CHECK(collapsed.timeline.step_time.picoseconds() == per_group.timeline.step_time.picoseconds());
  REQUIRE(collapsed.timeline.spans.size() == per_group.timeline.spans.size());
  std::size_t differing = 0;
  for (std::size_t t = 0; t < collapsed.timeline.spans.size(); ++t) {
    const auto& a = collapsed.timeline.spans[t];
    const auto& b = per_group.timeline.spans[t];
    if (a.start != b.start || a.active != b.active || a.end != b.end) ++differing;
  }
  CHECK(differing == 0);
  // dp groups per TP call (and tp x dp - 1 replica transfers per send) became one event each.
  CHECK(collapsed.timeline.events < per_group.timeline.events);
  // The links see every group's traffic either way.
  REQUIRE(collapsed.links.size() == per_group.links.size());
  for (std::size_t i = 0; i < collapsed.links.size(); ++i) {
    CHECK(collapsed.links[i].id == per_group.links[i].id);
    CHECK(collapsed.links[i].bytes == Approx(per_group.links[i].bytes).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("replay: replicas started as one call end at the picosecond of one call per group (405B, 1,024 and 4,096 chips)") {
  check_same_replay(1024);
  check_same_replay(4096);
}
