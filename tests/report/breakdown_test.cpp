#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

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

TEST_CASE("breakdown: the per-stream sweep and the general one (a stream out of time order) agree with the hand count") {
  // The same activity as above, listed so that each stream's tasks run in id order (the sweep by
  // stream) and then with the compute stream's two tasks swapped in id order (the general sweep):
  //   forward [0, 4) and [5, 6), backward [8, 10); TP [3, 7) -> exposed in [4, 5) and [6, 7): 2 us;
  //   PP send [7, 9) -> exposed in [7, 8): 1 us; bubble [10, 12): 2 us; step time 12 us.
  workload::StepGraph g;
  g.simulated_ranks = {0};
  const workload::Task fwd{.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Forward};
  const workload::Task bwd{.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Backward};
  const workload::Task tp{.kind = TaskKind::Collective, .stream = Stream::TpComm, .category = Category::TpComm};
  const workload::Task pp{.kind = TaskKind::Transfer, .stream = Stream::PpComm, .category = Category::PpComm};
  const replay::Span f1{us(0), us(0), us(4)}, f2{us(5), us(5), us(6)}, b1{us(8), us(8), us(10)};
  const replay::Span t1{us(3), us(3), us(7)}, p1{us(7), us(7), us(9)};
  replay::Timeline tl;
  tl.step_time = us(12);
  const auto expect = [&](const report::Breakdown& b) {
    CHECK(at(b, Part::Forward) == Approx(5));
    CHECK(at(b, Part::Backward) == Approx(2));
    CHECK(at(b, Part::ExposedTp) == Approx(2));
    CHECK(at(b, Part::ExposedPp) == Approx(1));
    CHECK(at(b, Part::Bubble) == Approx(2));
    CHECK(b.total() == Approx(12e-6));
  };
  SECTION("each stream in time order") {
    g.tasks = {fwd, tp, fwd, pp, bwd};
    tl.spans = {f1, t1, f2, p1, b1};
    expect(report::rank_breakdown(g, tl, 0));
  }
  SECTION("the compute stream out of time order") {
    g.tasks = {fwd, bwd, tp, fwd, pp};
    tl.spans = {f2, b1, t1, f1, p1};
    expect(report::rank_breakdown(g, tl, 0));
  }
}

TEST_CASE("breakdown: the per-stream sweep and the general sweep give the same sums to the bit") {
  // Random activity on one rank's four streams: back to back or with gaps, empty tasks, collectives
  // whose call starts after they reach it. Listed stream by stream in time order, the lanes are
  // ordered (the sweep by stream); with the compute stream's tasks listed last first, the general
  // sweep runs. Both see the same intervals, and only compute parts share a priority, on one
  // stream, so they never tie: the same sums, bit for bit, and they cover the step.
  std::mt19937_64 rng(7);
  const Category compute[] = {Category::Forward, Category::Backward, Category::Recompute, Category::Optimizer};
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<workload::Task> by_stream[4];
    std::vector<replay::Span> spans_by_stream[4];
    trnsim::sim::Time::Rep last_end = 0;
    for (int s = 0; s < 4; ++s) {
      trnsim::sim::Time::Rep t = static_cast<trnsim::sim::Time::Rep>(rng() % 5);
      for (int i = 0; i < 30; ++i) {
        t += rng() % 3 == 0 ? 0 : static_cast<trnsim::sim::Time::Rep>(rng() % 7);
        const auto end = t + static_cast<trnsim::sim::Time::Rep>(rng() % 9);
        workload::Task task;
        replay::Span span{us(static_cast<double>(t)), us(static_cast<double>(t)), us(static_cast<double>(end))};
        switch (s) {
          case 0: task = {.kind = TaskKind::Compute, .stream = Stream::Compute, .category = compute[rng() % 4]}; break;
          case 1: task = {.kind = TaskKind::Collective, .stream = Stream::TpComm, .category = Category::TpComm}; break;
          case 2: task = {.kind = TaskKind::Collective, .stream = Stream::DpComm, .category = Category::DpComm}; break;
          default: task = {.kind = TaskKind::Transfer, .stream = Stream::PpComm, .category = Category::PpComm}; break;
        }
        if (task.kind == TaskKind::Collective) {
          span.active = us(static_cast<double>(std::min(end, t + static_cast<trnsim::sim::Time::Rep>(rng() % 3))));
        }
        by_stream[s].push_back(task);
        spans_by_stream[s].push_back(span);
        last_end = std::max(last_end, end);
        t = end;
      }
    }
    const auto graph_of = [&](bool compute_reversed, replay::Timeline& tl) {
      workload::StepGraph g;
      g.simulated_ranks = {0};
      for (int s = 0; s < 4; ++s) {
        for (std::size_t i = 0; i < by_stream[s].size(); ++i) {
          const std::size_t k = s == 0 && compute_reversed ? by_stream[s].size() - 1 - i : i;
          g.tasks.push_back(by_stream[s][k]);
          tl.spans.push_back(spans_by_stream[s][k]);
        }
      }
      tl.step_time = us(static_cast<double>(last_end + static_cast<trnsim::sim::Time::Rep>(rng() % 4)));
      return g;
    };
    replay::Timeline ordered_tl, reversed_tl;
    const workload::StepGraph ordered = graph_of(false, ordered_tl);
    const workload::StepGraph reversed = graph_of(true, reversed_tl);
    reversed_tl.step_time = ordered_tl.step_time;
    const auto a = report::rank_breakdown(ordered, ordered_tl, 0);
    const auto b = report::rank_breakdown(reversed, reversed_tl, 0);
    CHECK(a.seconds == b.seconds);
    CHECK(report::rank_breakdowns(ordered, ordered_tl)[0].seconds == a.seconds);
    CHECK(report::rank_breakdowns(reversed, reversed_tl)[0].seconds == b.seconds);
    CHECK(a.total() == Approx(ordered_tl.step_time.to_seconds()));
  }
}

TEST_CASE("breakdown: the bottleneck rank is chosen on exact compute times, ties to the lowest rank") {
  // Two ranks with 32 ps of compute each. Rank 0 has one forward of 32 ps: compute() = 32 / 1e12
  // = 3.2e-11 s. Rank 1 has a forward of 1 ps and a backward of 31 ps: in doubles 1e-12 + 3.1e-11
  // = 3.2000000000000006e-11 s, one rounding above rank 0's. The ranks tie to the picosecond, so
  // rank 0 is the bottleneck; comparing the parts' seconds would pick rank 1.
  const auto ps = [](sim::Time::Rep v) { return sim::Time::ps(v); };
  workload::StepGraph g;
  g.simulated_ranks = {0, 1};
  const workload::Task fwd0{.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Forward,
                            .rank = 0};
  workload::Task fwd1 = fwd0, bwd1 = fwd0;
  fwd1.rank = bwd1.rank = 1;
  bwd1.category = Category::Backward;
  g.tasks = {fwd0, fwd1, bwd1};
  replay::Timeline tl;
  tl.step_time = ps(40);
  SECTION("a tie") {
    tl.spans = {{ps(0), ps(0), ps(32)}, {ps(0), ps(0), ps(1)}, {ps(1), ps(1), ps(32)}};
    const auto times = report::rank_compute_times(g, tl);
    REQUIRE(times);
    CHECK(*times == std::vector<sim::Time>{ps(32), ps(32)});
    const std::vector<report::Breakdown> all = report::rank_breakdowns(g, tl);
    REQUIRE(all[1].compute() > all[0].compute());  // the rounding the exact times look past
    CHECK(report::step_breakdown(g, tl).rank == 0);
  }
  SECTION("rank 1 one picosecond longer") {
    tl.spans = {{ps(0), ps(0), ps(32)}, {ps(0), ps(0), ps(1)}, {ps(1), ps(1), ps(33)}};
    CHECK(*report::rank_compute_times(g, tl) == std::vector<sim::Time>{ps(32), ps(33)});
    CHECK(report::step_breakdown(g, tl).rank == 1);
  }
  SECTION("compute tasks out of time order (a trace's): no exact times, the breakdowns decide") {
    // Rank 1's backward listed before its forward: its intervals may overlap as far as one pass
    // in task order can tell, so the parts' seconds decide, and rank 1's are the larger.
    g.tasks = {fwd0, bwd1, fwd1};
    tl.spans = {{ps(0), ps(0), ps(32)}, {ps(1), ps(1), ps(32)}, {ps(0), ps(0), ps(1)}};
    CHECK_FALSE(report::rank_compute_times(g, tl));
    CHECK(report::step_breakdown(g, tl).rank == 1);
  }
}
