// Compute that overlaps communication is slowed for the overlapped part only: its rate is
// 1 / comm_compute_slowdown while its rank has anything on the network, 1 otherwise, and its end
// moves when that changes. Every expected time below is worked out by hand from the fixed
// durations of the communicator, independently of the executor.
#include <catch2/catch.hpp>

#include <vector>

#include "../workload/hand_graph.hpp"
#include "fixed_communicator.hpp"
#include "trnsim/replay/executor.hpp"

using namespace trnsim;
using test::GraphBuilder;
using workload::StepGraph;
using workload::Stream;
using workload::TaskId;

namespace {

sim::Time ms(double v) { return sim::Time::seconds(v * 1e-3); }
double in_ms(sim::Time t) { return t.to_seconds() * 1e3; }
// Each change of rate rounds the task's end to the picosecond: allow 10 ps.
constexpr double kMarginMs = 1e-8;
constexpr double kMarginUs = 1e-5;

// Replays `g` with every collective 4 ms on the network (transfers 0) and compute slowed by
// `slowdown` while its rank communicates; seconds[w] is work w alone.
replay::Timeline run_4ms_calls(const StepGraph& g, const std::vector<double>& seconds, double slowdown) {
  sim::Engine engine;
  test::FixedCommunicator comm(engine, ms(4), ms(0));
  replay::ExecutorOptions options;
  options.comm_compute_slowdown = slowdown;
  return replay::execute(engine, g, seconds, comm, options);
}

// Rank 0 computes `work_ms` from time 0 while it also waits at a 4 ms collective; rank 1 computes
// `late_ms` before it reaches the same call, so the call is on the network during
// [late_ms, late_ms + 4). Returns the timeline; the compute task of rank 0 is task 0.
replay::Timeline overlap_run(double work_ms, double late_ms, double slowdown) {
  GraphBuilder b;
  const TaskId work = b.compute(0, 0);
  const TaskId m0 = b.collective(0, 0);
  const TaskId late = b.compute(1, 1);
  const TaskId m1 = b.collective(1, 0);
  b.edge(late, m1);
  REQUIRE(work == 0);
  (void)m0;
  const StepGraph g = b.finish({0, 1}, 2, 1);
  return run_4ms_calls(g, {work_ms * 1e-3, late_ms * 1e-3}, slowdown);
}

}  // namespace

TEST_CASE("executor: compute is slowed only while its rank communicates") {
  SECTION("a task that starts before a collective and outlasts it") {
    // 10 ms of work from 0; the collective is on the network during [2, 6); slowdown 1.5.
    // [0, 2): rate 1, 2 ms of work done. [2, 6): rate 1/1.5, 4 / 1.5 = 2.667 ms done.
    // Left: 10 - 2 - 2.667 = 5.333 ms at rate 1 from 6: the task ends at 6 + 16/3 = 34/3 ms.
    // (Priced at its start it would take 10 ms: nothing was on the network at 0.)
    const auto tl = overlap_run(10, 2, 1.5);
    CHECK(in_ms(tl.spans[0].end) == Approx(34.0 / 3).margin(kMarginMs));
    CHECK(in_ms(tl.spans[1].active) == Approx(2));
    CHECK(in_ms(tl.spans[1].end) == Approx(6));
  }
  SECTION("a task that starts before a collective and ends during it") {
    // 3 ms of work: 2 ms done in [0, 2); the last 1 ms at rate 1/1.5 takes 1.5 ms: ends at 3.5 ms.
    const auto tl = overlap_run(3, 2, 1.5);
    CHECK(in_ms(tl.spans[0].end) == Approx(3.5).margin(kMarginMs));
  }
  SECTION("a task that ends before the collective starts is not slowed") {
    // 1.5 ms of work, the call starts at 2 ms: 1.5 ms.
    const auto tl = overlap_run(1.5, 2, 1.5);
    CHECK(tl.spans[0].end == ms(1.5));
  }
}

TEST_CASE("executor: a task entirely inside communication takes the slowdown times its work") {
  // A 4 ms collective of rank 0 alone starts at 0; 2 ms of independent compute starts at 0 too:
  // 2 x 1.5 = 3 ms, whether the compute task or the collective is made ready first (task order).
  for (const bool compute_first : {true, false}) {
    INFO("compute first: " << compute_first);
    GraphBuilder b;
    TaskId work = 0;
    if (compute_first) {
      work = b.compute(0, 0);
      b.collective(0, 0);
    } else {
      b.collective(0, 0);
      work = b.compute(0, 0);
    }
    const auto tl = run_4ms_calls(b.finish({0}, 1, 1), {2e-3}, 1.5);
    CHECK(tl.spans[work].end == ms(3));
  }
}

TEST_CASE("executor: a task that starts when the collective ends runs at full speed") {
  // collective [0, 4) ms, then 2 ms of compute that depends on it: [4, 6), not 3 ms.
  GraphBuilder b;
  const TaskId m = b.collective(0, 0);
  const TaskId work = b.compute(0, 0);
  b.edge(m, work);
  const auto tl = run_4ms_calls(b.finish({0}, 1, 1), {2e-3}, 1.5);
  CHECK(tl.spans[work].start == ms(4));
  CHECK(tl.spans[work].end == ms(6));
}

TEST_CASE("executor: two overlapping collectives slow compute once") {
  // Rank 0: 10 ms of compute from 0; collective X (rank 0 alone, TP stream) on the network during
  // [0, 4); collective Y (ranks 0 and 1, DP stream) during [2, 6), rank 1 reaching it after 2 ms
  // of compute. Rank 0 communicates during [0, 6): 6 / 1.5 = 4 ms of work done, 6 ms left at
  // rate 1: the task ends at 12 ms. (Slowing twice during [2, 4) would give 2/1.5 + 2/2.25 +
  // 2/1.5 = 3.56 ms done by 6 and an end at 12.44 ms.)
  GraphBuilder b;
  const TaskId work = b.compute(0, 0);
  b.collective(0, 0, Stream::TpComm);
  b.collective(0, 1, Stream::DpComm);
  const TaskId late = b.compute(1, 1);
  const TaskId y1 = b.collective(1, 1, Stream::DpComm);
  b.edge(late, y1);
  const auto tl = run_4ms_calls(b.finish({0, 1}, 2, 2), {10e-3, 2e-3}, 1.5);
  CHECK(tl.spans[late].end == ms(2));  // rank 1 has nothing on the network before 2 ms
  CHECK(in_ms(tl.spans[work].end) == Approx(12).margin(kMarginMs));
}

TEST_CASE("executor: compute's HBM share follows the collectives in flight while it runs") {
  // As in "collective DMA traffic takes its share of HBM": a 10 us all-reduce of 1 MB over 2 ranks
  // asks D = 2.5 MB / 10 us = 2.5e11 B/s of HBM; with H = 1e12 B/s compute keeps H / (H + D) = 0.8
  // of it, and 1 / 1.5 with two such all-reduces in flight. The test prices a task of W us of work
  // (alone) at W / share.
  auto run = [](double work_us, bool second_call) {
    GraphBuilder b;
    const TaskId work = b.compute(0, 0);
    b.collective(0, 0, Stream::TpComm);  // [0, 10) us
    if (second_call) {                   // [5, 15) us: rank 1 reaches it after 5 us of compute
      b.collective(0, 1, Stream::DpComm);
      const TaskId late = b.compute(1, 1);
      b.edge(late, b.collective(1, 1, Stream::DpComm));
    }
    StepGraph g = b.finish({0, 1}, 2, second_call ? 2 : 1);
    g.group_sets = {workload::GroupSet{2, {0, 1}}};
    for (auto& c : g.collectives) {
      c.op = workload::CollectiveOp::AllReduce;
      c.bytes = 1e6;
      c.group_set = 0;
    }
    sim::Engine engine;
    test::ExpectingCommunicator comm(engine, sim::Time::seconds(10e-6));
    const std::vector<double> seconds{work_us * 1e-6, 5e-6};
    replay::ExecutorOptions options;
    options.hbm_sharing.rank_hbm_bytes_per_s = 1e12;
    options.hbm_sharing.task_seconds = [seconds](std::uint32_t w, double share) { return seconds[w] / share; };
    return replay::execute(engine, g, seconds, comm, options).spans[work].end.to_seconds() * 1e6;
  };
  SECTION("the share returns to 1 when the collective ends") {
    // 12 us of work: at share 0.8 it would take 15 us; in [0, 10) 10/15 = 2/3 of it is done, the
    // last third (4 us of work) runs at the full share: ends at 14 us (not 15 us).
    CHECK(run(12, false) == Approx(14).margin(kMarginUs));
  }
  SECTION("the share drops while a second collective adds its demand") {
    // 12 us of work. [0, 5): share 0.8, 12 / 0.8 = 15 us for the whole: 5/15 = 1/3 done.
    // [5, 10): share 1/1.5, 18 us for the whole: 5/18 done (11/18 in all).
    // [10, 15): share 0.8 again: 5/15 = 6/18 done (17/18). Then 1/18 of 12 us at full share:
    // ends at 15 + 2/3 = 47/3 us.
    CHECK(run(12, true) == Approx(47.0 / 3).margin(kMarginUs));
  }
}
