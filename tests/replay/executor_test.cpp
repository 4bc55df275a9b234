#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "../workload/hand_graph.hpp"
#include "fixed_communicator.hpp"
#include "trnsim/replay/executor.hpp"
#include "trnsim/workload/step_graph_order.hpp"

using namespace trnsim;
using workload::Stream;
using test::GraphBuilder;
using workload::StepGraph;
using workload::TaskId;

namespace {

sim::Time usec(double v) { return sim::Time::seconds(v * 1e-6); }

// The HBM-sharing tests: `g` replayed with its one collective made an all-reduce of 1 MB over
// ranks 0 and 1 lasting 10 us (ExpectingCommunicator), and its one work of 3 us priced by
// `task_seconds` on a rank of HBM `hbm` B/s.
replay::Timeline replay_sharing_hbm(StepGraph& g, double hbm,
                                    std::function<double(std::uint32_t, double)> task_seconds) {
  g.collectives[0].op = workload::CollectiveOp::AllReduce;
  g.collectives[0].bytes = 1e6;
  g.group_sets = {workload::GroupSet{2, {0, 1}}};
  g.collectives[0].group_set = 0;
  sim::Engine engine;
  test::ExpectingCommunicator comm(engine, usec(10));
  const std::vector<double> seconds{3e-6};
  replay::ExecutorOptions options;
  options.hbm_sharing.rank_hbm_bytes_per_s = hbm;
  options.hbm_sharing.task_seconds = std::move(task_seconds);
  return replay::execute(engine, g, seconds, comm, options);
}

}  // namespace

TEST_CASE("executor: a chain of compute tasks takes the sum of their times") {
  GraphBuilder b;
  const TaskId a = b.compute(0, 0), c = b.compute(0, 1), d = b.compute(0, 0);
  b.edge(a, c);
  b.edge(c, d);
  const StepGraph g = b.finish({0}, 2, 0);
  sim::Engine engine;
  test::FixedCommunicator comm(engine, usec(0), usec(0));
  const std::vector<double> seconds{3e-6, 5e-6};
  const auto tl = replay::execute(engine, g, seconds, comm);
  // 3 + 5 + 3 us, back to back.
  CHECK(tl.step_time == usec(11));
  CHECK(tl.spans[c].start == usec(3));
  CHECK(tl.spans[d].end == usec(11));
}

TEST_CASE("executor: independent tasks share one stream in turn but run in parallel on two ranks") {
  SECTION("same rank, same stream: serialised") {
    GraphBuilder b;
    b.compute(0, 0);
    b.compute(0, 0);
    const StepGraph g = b.finish({0}, 1, 0);
    sim::Engine engine;
    test::FixedCommunicator comm(engine, usec(0), usec(0));
    const std::vector<double> seconds{4e-6};
    CHECK(replay::execute(engine, g, seconds, comm).step_time == usec(8));
  }
  SECTION("two ranks: concurrent") {
    GraphBuilder b;
    b.compute(0, 0);
    b.compute(1, 0);
    const StepGraph g = b.finish({0, 1}, 1, 0);
    sim::Engine engine;
    test::FixedCommunicator comm(engine, usec(0), usec(0));
    const std::vector<double> seconds{4e-6};
    CHECK(replay::execute(engine, g, seconds, comm).step_time == usec(4));
  }
}

TEST_CASE("executor: a collective starts when its last member arrives and releases all members") {
  GraphBuilder b;
  // rank 0 computes 2 us, rank 1 computes 7 us, then both join collective 0 (10 us on the network),
  // then each computes 1 us. Expected: collective active at 7, done at 17; step ends at 18.
  const TaskId c0 = b.compute(0, 0), c1 = b.compute(1, 1);
  const TaskId m0 = b.collective(0, 0), m1 = b.collective(1, 0);
  const TaskId e0 = b.compute(0, 2), e1 = b.compute(1, 2);
  b.edge(c0, m0);
  b.edge(c1, m1);
  b.edge(m0, e0);
  b.edge(m1, e1);
  const StepGraph g = b.finish({0, 1}, 3, 1);
  sim::Engine engine;
  test::FixedCommunicator comm(engine, usec(10), usec(0));
  const std::vector<double> seconds{2e-6, 7e-6, 1e-6};
  const auto tl = replay::execute(engine, g, seconds, comm);
  CHECK(comm.collectives_started == 1);
  CHECK(tl.spans[m0].start == usec(2));   // rank 0 waits at the call from 2 us ...
  CHECK(tl.spans[m0].active == usec(7));  // ... until rank 1 arrives
  CHECK(tl.spans[m1].end == usec(17));
  CHECK(tl.step_time == usec(18));
}

TEST_CASE("executor: a transfer orders work across ranks") {
  GraphBuilder b;
  // stage 0 computes 5 us, sends (3 us), stage 1 computes 2 us: 10 us in all.
  const TaskId f0 = b.compute(0, 0);
  const TaskId s = b.transfer(0, 1);
  const TaskId f1 = b.compute(1, 1);
  b.edge(f0, s);
  b.edge(s, f1);
  const StepGraph g = b.finish({0, 1}, 2, 0);
  sim::Engine engine;
  test::FixedCommunicator comm(engine, usec(0), usec(3));
  const std::vector<double> seconds{5e-6, 2e-6};
  const auto tl = replay::execute(engine, g, seconds, comm);
  CHECK(comm.transfers_started == 1);
  CHECK(tl.spans[f1].start == usec(8));
  CHECK(tl.step_time == usec(10));
}

TEST_CASE("executor: compute that starts while its rank communicates is slowed by the GPU factor") {
  GraphBuilder b;
  // A 10 us collective alone on the TP stream starts at 0; compute (4 us) is independent and starts
  // at 0 too, while the collective is on the network: 4 us x 1.25 = 5 us.
  const TaskId m = b.collective(0, 0);
  const TaskId c = b.compute(0, 0);
  const StepGraph g = b.finish({0}, 1, 1);
  sim::Engine engine;
  test::FixedCommunicator comm(engine, usec(10), usec(0));
  const std::vector<double> seconds{4e-6};
  replay::ExecutorOptions options;
  options.comm_compute_slowdown = 1.25;
  const auto tl = replay::execute(engine, g, seconds, comm, options);
  CHECK(tl.spans[c].end == usec(5));
  CHECK(tl.spans[m].end == usec(10));
}

TEST_CASE("executor: collective DMA traffic takes its share of HBM from compute that starts during it") {
  // A 10 us all-reduce of 1 MB over 2 ranks moves (2 x bus factor 1 + reduction 1/2) x 1 MB =
  // 2.5 MB through each member's HBM: D = 2.5e6 / 10e-6 = 2.5e11 B/s. With H = 1e12 B/s, compute
  // starting meanwhile keeps H / (H + D) = 1 / 1.25 = 0.8 of H. The test prices the work as
  // 3 us / share: 3.75 us. A second compute task after the collective ends runs at the full
  // share again: 3 us.
  GraphBuilder b;
  const TaskId m = b.collective(0, 0);
  const TaskId c = b.compute(0, 0);
  const TaskId after = b.compute(0, 0);
  b.edge(m, after);
  b.edge(c, after);
  StepGraph g = b.finish({0}, 1, 1);
  std::vector<double> shares;
  const auto tl = replay_sharing_hbm(g, 1e12, [&shares](std::uint32_t, double share) {
    shares.push_back(share);
    return 3e-6 / share;
  });
  REQUIRE(shares.size() == 1);
  CHECK(shares[0] == Approx(0.8));
  CHECK(tl.spans[c].end.to_seconds() == Approx(3.75e-6));
  CHECK(tl.spans[after].start == usec(10));
  CHECK(tl.spans[after].end == usec(13));
  CHECK(replay::collective_hbm_bytes(workload::CollectiveOp::AllGather, 4, 1e6) == Approx(2 * 0.75 * 1e6));
}

TEST_CASE("executor: collectives draw no more HBM than it delivers: compute keeps at least half") {
  // The test above with H = 1e9 B/s, 1/250 of D = 2.5e11 B/s: the network's figures would
  // leave compute H / (H + D) = 1/251 of H, where the collective itself cannot draw more than H.
  // Compute keeps H / (H + H) = 0.5: 3 us / 0.5 = 6 us. (An HBM of 0.001 GB/s beside 3,500 GB/s of
  // DMA made a valid plan's task longer than the simulated clock holds.)
  GraphBuilder b;
  b.collective(0, 0);
  const TaskId c = b.compute(0, 0);
  StepGraph g = b.finish({0}, 1, 1);
  const auto tl = replay_sharing_hbm(g, 1e9, [](std::uint32_t, double share) { return 3e-6 / share; });
  CHECK(tl.spans[c].end == usec(6));
}

TEST_CASE("executor: a cycle is reported with its tasks when the replay ends, not hung") {
  SECTION("two tasks waiting for each other") {
    GraphBuilder b;
    b.compute(0, 0);
    const TaskId a = b.compute(0, 0), c = b.compute(0, 0);
    b.edge(a, c);
    b.edge(c, a);
    const StepGraph g = b.finish({0}, 1, 0);
    sim::Engine engine;
    test::FixedCommunicator comm(engine, usec(0), usec(0));
    const std::vector<double> seconds{1e-6};
    try {
      replay::execute(engine, g, seconds, comm);
      FAIL("no cycle reported");
    } catch (const workload::CycleError& e) {
      CHECK(e.tasks() == std::vector<TaskId>{a, c});
    }
    // Checked when the replay ends with tasks waiting: the free task 0 ran (its completion is the
    // one event), the cycle's two never became ready.
    CHECK(engine.events_processed() == 1);
  }
  SECTION("a collective member waiting for a task that waits for the call") {
    GraphBuilder b;
    const TaskId m0 = b.collective(0, 0), x = b.compute(1, 0), m1 = b.collective(1, 0);
    b.edge(m1, x);
    b.edge(x, m0);
    const StepGraph g = b.finish({0, 1}, 1, 1);
    sim::Engine engine;
    test::FixedCommunicator comm(engine, usec(1), usec(0));
    const std::vector<double> seconds{1e-6};
    CHECK_THROWS_AS(replay::execute(engine, g, seconds, comm), workload::CycleError);
    CHECK(comm.collectives_started == 0);
  }
}
