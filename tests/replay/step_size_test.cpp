// replay/step_size.hpp: the guards run before a replay, with their estimates.
#include <catch2/catch.hpp>

#include <vector>

#include "../workload/hand_graph.hpp"
#include "trnsim/error.hpp"
#include "trnsim/replay/step_size.hpp"

using namespace trnsim;

TEST_CASE("step size: the lower bound is the busiest stream of a rank, its tasks back to back") {
  test::GraphBuilder b;
  b.compute(0, 0);  // 3 s
  b.compute(0, 1);  // 4 s
  b.compute(1, 0);  // 3 s
  b.collective(0, 0);
  workload::StepGraph g = b.finish({0, 1}, 2, 1);
  g.collectives[0].bytes = 8e9;
  hw::ClusterSpec cluster;
  cluster.instance.chip.hbm_bandwidth = 1e12;  // the fastest rate: 8e9 / 2 / 1e12 = 0.004 s
  cluster.instance.calibration.collective_launch_s = 1e-3;
  const std::vector<double> work_seconds{3, 4};
  // Rank 0's compute stream: 3 + 4 = 7 s; its TP stream 0.005 s; rank 1: 3 s.
  CHECK(replay::estimate_step_seconds(g, work_seconds, cluster) == Approx(7));
  SECTION("communication alone can make the bound") {
    cluster.instance.chip.hbm_bandwidth = 1e3;  // 8e9 / 2 / 1e3 = 4e6 s
    CHECK(replay::estimate_step_seconds(g, work_seconds, cluster) == Approx(4e6 + 1e-3));
  }
}

TEST_CASE("step size: a step beyond 100 days of simulated time is an input error") {
  CHECK_NOTHROW(replay::check_step_seconds(100 * 86400.0));
  CHECK_THROWS_AS(replay::check_step_seconds(100 * 86400.0 * 1.001), InputError);
  CHECK_THROWS_WITH(replay::check_step_seconds(1e10), Catch::Contains("1e+10 s"));
}

TEST_CASE("step size: memory over the limit is an input error naming --max-memory and --force") {
  // 1000 tasks at 256 bytes = 256 kB: under a 1 MB limit, over a 100 kB one; 0 is no limit.
  const replay::StepSize size{1000, 256e3};
  CHECK_NOTHROW(replay::check_step_size(size, 1e6));
  CHECK_NOTHROW(replay::check_step_size(size, 0));
  CHECK_THROWS_WITH(replay::check_step_size(size, 1e5),
                    Catch::Contains("0.000256 GB") && Catch::Contains("--max-memory") && Catch::Contains("--force"));
}
