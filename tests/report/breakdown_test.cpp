#include <catch2/catch.hpp>

#include "trnsim/report/analysis/breakdown.hpp"

#include "report_support.hpp"

using namespace trnsim;
using report::Part;
using workload::Category;
using workload::Stream;
using workload::TaskKind;

namespace {
using test::us;
double at(const report::Breakdown& b, Part p) { return b.seconds[static_cast<int>(p)] * 1e6; }
}  // namespace

TEST_CASE("breakdown: parts add up to the step time and overlap goes to compute first") {
  // Rank 0, hand-made timeline (us):
  //   forward compute [0, 4), backward compute [6, 10)
  //   TP collective   [3, 7)   -> exposed only in [4, 6): 2 us
  //   DP collective   [9, 14)  -> exposed in [10, 14): 4 us (TP is over)
  //   nothing in      [14, 16) -> bubble 2 us; step time 16 us.
  workload::StepGraph g;
  g.simulated_ranks = {0};
  g.tasks = {
      {.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Forward},
      {.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Backward},
      {.kind = TaskKind::Collective, .stream = Stream::TpComm, .category = Category::TpComm},
      {.kind = TaskKind::Collective, .stream = Stream::DpComm, .category = Category::DpComm},
  };
  replay::Timeline tl;
  tl.spans = {{us(0), us(0), us(4)}, {us(6), us(6), us(10)}, {us(3), us(3), us(7)}, {us(9), us(9), us(14)}};
  tl.step_time = us(16);
  const auto b = report::step_breakdown(g, tl);
  CHECK(at(b, Part::Forward) == Approx(4));
  CHECK(at(b, Part::Backward) == Approx(4));
  CHECK(at(b, Part::ExposedTp) == Approx(2));
  CHECK(at(b, Part::ExposedDp) == Approx(4));
  CHECK(at(b, Part::Bubble) == Approx(2));
  CHECK(b.total() == Approx(16e-6));
}
