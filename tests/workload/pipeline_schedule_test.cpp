#include <catch2/catch.hpp>

#include <set>
#include <tuple>

#include "trnsim/workload/pipeline_schedule.hpp"

using namespace trnsim::workload;

namespace {

// Every (micro-batch, chunk) runs forward once and backward once, forward first.
void check_complete(const std::vector<ScheduleUnit>& order, std::int64_t m, std::int64_t v) {
  std::set<std::tuple<int, int>> fwd, bwd;
  for (const auto& u : order) {
    const auto key = std::make_tuple(u.micro_batch, u.chunk);
    if (u.forward) {
      CHECK(fwd.insert(key).second);
    } else {
      CHECK(fwd.count(key) == 1);
      CHECK(bwd.insert(key).second);
    }
  }
  CHECK(fwd.size() == static_cast<std::size_t>(m * v));
  CHECK(bwd.size() == static_cast<std::size_t>(m * v));
}

}  // namespace

TEST_CASE("schedule: 1F1B warms up pp - stage - 1 forwards and holds at most pp - stage micro-batches") {
  const std::int64_t pp = 4, m = 8;
  for (std::int64_t p = 0; p < pp; ++p) {
    const auto order = stage_schedule(PipelineSchedule::OneFOneB, pp, p, m, 1);
    check_complete(order, m, 1);
    std::int64_t warmup = 0;
    while (order[static_cast<std::size_t>(warmup)].forward) ++warmup;
    CHECK(warmup == pp - p);  // pp - p - 1 warm-up forwards, then the first steady forward
    CHECK(peak_units_in_flight(order) == pp - p);
  }
  // Fewer micro-batches than stages: everything is warm-up.
  CHECK(peak_units_in_flight(stage_schedule(PipelineSchedule::OneFOneB, 8, 0, 3, 1)) == 3);
}

TEST_CASE("schedule: GPipe holds every micro-batch") {
  const auto order = stage_schedule(PipelineSchedule::GPipe, 4, 3, 6, 1);
  check_complete(order, 6, 1);
  CHECK(peak_units_in_flight(order) == 6);
}

TEST_CASE("schedule: interleaved 1F1B on the first stage holds pp (v + 1) - 1 chunk units") {
  // Megatron-LM: warm-up 2 (pp - 1) + (v - 1) pp units, then one more forward before the first
  // backward: pp = 4, v = 2 gives 6 + 4 + 1 = 11 units of L/(pp v) layers, i.e.
  // L/pp (1 + (pp - 1)/(pp v)) layers, Korthikanti et al. 2022's interleaved memory factor.
  const std::int64_t pp = 4, v = 2, m = 8;
  const auto order = stage_schedule(PipelineSchedule::Interleaved, pp, 0, m, v);
  check_complete(order, m, v);
  CHECK(peak_units_in_flight(order) == 11);
  // The first units run chunk 0 for micro-batches 0..3, then chunk 1 for 0..3.
  CHECK(order[0].chunk == 0);
  CHECK(order[3].micro_batch == 3);
  CHECK(order[4].chunk == 1);
  CHECK(order[4].micro_batch == 0);
  // The last stage warms up (v - 1) pp = 4 units.
  const auto last = stage_schedule(PipelineSchedule::Interleaved, pp, pp - 1, m, v);
  check_complete(last, m, v);
  CHECK(peak_units_in_flight(last) == 5);
}
