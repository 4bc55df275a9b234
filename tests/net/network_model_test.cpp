// The same cases run on both network models (CONTRIBUTING.md, "Habits": one set of cases for every
// implementation of an interface).
#include <catch2/catch.hpp>

#include <numeric>
#include <set>
#include <string_view>

#include "test_clusters.hpp"
#include "test_runs.hpp"
#include "trnsim/net/network.hpp"

using namespace trnsim;
using test::iota;
using test::run_one;
using net::Algorithm;
using net::CollectiveOp;
using net::NetworkModelKind;

TEST_CASE("network: ring all-reduce without contention takes L + 2(n-1)(M + a + max(S, chunk/B)) exactly") {
  // 8 GPUs behind one switch: each GPU's link B = 100 GB/s; a ring neighbour is 2 hops with
  // latency a = 1 us (GPU -> switch) + 0 (switch -> GPU). Launch L = 10 us, one message per rank
  // and step M = 2 us, step synchronisation S = 5 us. The reductions' reads of their operands run
  // on each GPU's local path (half its 2,000 GB/s HBM: 1,000 GB/s), never the bottleneck here.
  auto c = test::gpu_cluster(8, 1);
  c.instance.calibration.collective_launch_s = 10e-6;
  c.instance.calibration.collective_message_s = 2e-6;
  c.instance.calibration.collective_step_s = 5e-6;
  SECTION("bandwidth-bound: each step's data outlasts its synchronisation") {
    const double s = 8e6;  // S/n = 1 MB: 10 us per step at 100 GB/s, above S = 5 us
    // 14 steps x (2 + 1 + 10) us = 182 us; + 10 us launch = 192 us.
    const net::Collective coll{CollectiveOp::AllReduce, iota(8), s, Algorithm::Ring};
    CHECK(run_one(c, NetworkModelKind::Analytic, coll) == sim::Time::us(192));
    CHECK(run_one(c, NetworkModelKind::Flow, coll) == sim::Time::us(192));
  }
  SECTION("latency-bound: each step lasts its synchronisation") {
    const double s = 8e3;  // 1 kB per step: 0.01 us of data, under S = 5 us
    // 14 steps x (2 + 1 + 5) us = 112 us; + 10 us launch = 122 us.
    const net::Collective coll{CollectiveOp::AllReduce, iota(8), s, Algorithm::Ring};
    CHECK(run_one(c, NetworkModelKind::Analytic, coll) == sim::Time::us(122));
    CHECK(run_one(c, NetworkModelKind::Flow, coll) == sim::Time::us(122));
  }
}

TEST_CASE("network: flow agrees with analytic within 1% on every contention-free case") {
  struct Case {
    const char* name;
    hw::ClusterSpec cluster;
    int ranks;
  };
  auto trn2u = test::ultraserver_cluster(4, 4, 1, 4, 4);
  // DMA below the NeuronLinks: 0.5 x 300 GB/s per chip for 4 ports of 100 GB/s.
  auto dma_bound = test::torus_cluster(4, 4, 2, 1);
  dma_bound.instance.chip.dma_bandwidth = 300e9;
  dma_bound.instance.calibration.collective_dma_share = 0.5;
  std::vector<Case> cases = {
      {"trn1-like, one instance", test::torus_cluster(4, 4, 2, 1), 32},
      {"trn1-like, DMA-bound chips", dma_bound, 32},
      {"trn1-like, two instances", test::torus_cluster(4, 4, 2, 2), 64},
      {"trn2u-like UltraServer", trn2u, 64},
      {"gpu, two nodes", test::gpu_cluster(8, 2), 16},
      {"trn3-like switched, two UltraServers", test::switched_cluster(2), 64},
  };
  const CollectiveOp ops[] = {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
                              CollectiveOp::AllToAll, CollectiveOp::Broadcast, CollectiveOp::SendRecv};
  int compared = 0;
  for (auto& k : cases) {
    k.cluster.instance.calibration.collective_step_s = 5e-6;
    k.cluster.instance.calibration.collective_message_s = 1e-6;
    k.cluster.instance.calibration.collective_launch_s = 20e-6;
    const hw::DeviceMap dm(k.cluster);
    for (CollectiveOp op : ops) {
      for (Algorithm a : net::kConcreteAlgorithms) {
        for (double bytes : {64.0 * 1024, 64.0 * 1024 * 1024}) {
          net::Collective coll{op, iota(op == CollectiveOp::SendRecv ? 2 : k.ranks), bytes, a};
          if (op == CollectiveOp::SendRecv) coll.ranks = {0, k.ranks - 1};
          if (op == CollectiveOp::AllToAll && k.ranks > 64) coll.ranks = iota(64);
          if (!net::supports(a, coll, k.cluster, dm)) continue;
          const auto analytic = run_one(k.cluster, NetworkModelKind::Analytic, coll).to_seconds();
          const auto flow = run_one(k.cluster, NetworkModelKind::Flow, coll).to_seconds();
          INFO(k.name << ": " << trnsim::to_string(op) << " " << trnsim::to_string(a) << " " << bytes << " B");
          // The direct mesh (n > 2) and the pipelined ring broadcast are not contention-free or not
          // lock-step: their flows start at different times over routes of different lengths and
          // max-min hands freed bandwidth on, so flow is faster; the analytic model (lock-step
          // steps, even shares) is then an upper bound.
          const bool lock_step = !(a == Algorithm::Direct && coll.ranks.size() > 2 && op != CollectiveOp::Broadcast) &&
                                 !(op == CollectiveOp::Broadcast && (a == Algorithm::Ring || a == Algorithm::Direct));
          if (lock_step) {
            CHECK(flow == Approx(analytic).epsilon(0.01));
            ++compared;
          } else {
            CHECK(flow <= analytic * 1.000001);
          }
        }
      }
    }
  }
  CHECK(compared > 100);
}

TEST_CASE("network: two groups whose rings cross one link each get half of it in flow") {
  // Two 8-GPU nodes under one leaf per rail, one spine, uplinks an eighth of the leaf's ports:
  // the cross-rail rings {0, 9} and {1, 8} both cross rail 0's uplink (0 -> 9 and 8 -> 1) and
  // rail 1's uplink (9 -> 0 and 1 -> 8).
  const auto c = test::crossing_cluster();  // uplink = 2 x 25 GB/s / 8 = 6.25 GB/s
  const double s = 100e6;
  const net::Collective a{CollectiveOp::AllReduce, {0, 9}, s, Algorithm::Ring};
  const net::Collective b{CollectiveOp::AllReduce, {1, 8}, s, Algorithm::Ring};
  const sim::Time alone = run_one(c, NetworkModelKind::Flow, a);
  // Alone: 2 steps of S/2 at 6.25 GB/s = 16 ms of transfer, plus the route latencies.
  const test::TwoCalls both(c, NetworkModelKind::Flow, a, b);
  const double fixed = alone.to_seconds() - 2 * (s / 2) / 6.25e9;
  CHECK(both.done_a == both.done_b);
  CHECK(both.done_a.to_seconds() - fixed == Approx(2 * (alone.to_seconds() - fixed)).epsilon(1e-9));
  // The analytic model cannot see the other group.
  CHECK(run_one(c, NetworkModelKind::Analytic, a) == alone);
}

TEST_CASE("network: every collective delivers exactly the bytes it sends") {
  const auto c = test::torus_cluster(4, 4, 2, 2);
  const double s = 3.0 * 1024 * 1024;
  struct Expect {
    CollectiveOp op;
    Algorithm a;
    int n;
    double bytes;  // total over ranks, by the algorithm's definition
  };
  const Expect cases[] = {
      {CollectiveOp::AllReduce, Algorithm::Ring, 64, 2 * 63 * s},            // n x 2(n-1) x S/n
      {CollectiveOp::AllReduce, Algorithm::Hierarchical, 64, 2 * 31 * s * 2 + 2 * s},
      {CollectiveOp::ReduceScatter, Algorithm::BidirectionalRing, 64, 63 * s},
      {CollectiveOp::AllGather, Algorithm::HalvingDoubling, 64, 63 * s},
      {CollectiveOp::AllToAll, Algorithm::Direct, 16, 15 * s},
      {CollectiveOp::Broadcast, Algorithm::Ring, 16, 15 * s},
  };
  for (const auto& e : cases) {
    sim::Engine engine;
    net::Network net(c, NetworkModelKind::Flow, engine);
    bool done = false;
    net.start(net::Collective{e.op, iota(e.n), s, e.a}, [&] { done = true; });
    engine.run();
    INFO(trnsim::to_string(e.op) << " " << trnsim::to_string(e.a));
    CHECK(done);
    CHECK(net.counters().bytes_delivered == Approx(e.bytes).epsilon(1e-12));
    double link_bytes = 0;
    for (const auto& u : net.link_usage()) link_bytes += u.bytes;
    CHECK(link_bytes >= net.counters().bytes_delivered);
    CHECK(net.counters().in_flight == 0);
  }
}

TEST_CASE("network: the analytic optimum follows size and topology") {
  auto c = test::torus_cluster(4, 4, 2, 4);
  c.instance.calibration.collective_step_s = 10e-6;
  c.instance.calibration.collective_message_s = 1e-6;
  sim::Engine engine;
  net::Network net(c, NetworkModelKind::Analytic, engine);  // no library: Auto is the optimum
  // Across 4 instances, large: hierarchical keeps the slow EFA hops to 2(I-1) steps.
  CHECK(net.choose({CollectiveOp::AllReduce, iota(128), 256e6, Algorithm::Optimal}) == Algorithm::Hierarchical);
  CHECK(net.choose({CollectiveOp::AllReduce, iota(128), 256e6, Algorithm::Auto}) == Algorithm::Hierarchical);
  // Small on 16 ranks: fixed step costs dominate; halving-doubling or the mesh take fewer steps.
  const auto small = net.choose({CollectiveOp::AllReduce, iota(16), 1024, Algorithm::Optimal});
  CHECK((small == Algorithm::HalvingDoubling || small == Algorithm::Direct));
  // Forced stays forced.
  CHECK(net.choose({CollectiveOp::AllReduce, iota(16), 1024, Algorithm::Ring}) == Algorithm::Ring);
  CHECK(net.choose({CollectiveOp::SendRecv, {0, 40}, 1024, Algorithm::Auto}) == Algorithm::Direct);
}

TEST_CASE("network: point-to-point transfers pay launch, one message, latency and max(step, bytes / route)") {
  // Chips 0 and 1 of a 4x1 torus: the route is chip 0's DMA link (400 GB/s: half the test chip's
  // 800 GB/s HBM) then one 100 GB/s NeuronLink port with 1 us latency; bottleneck 100 GB/s.
  // Launch L = 3 us, message M = 1 us, step S = 2 us.
  auto c = test::torus_cluster(4, 1, 1, 1);
  c.instance.calibration.collective_launch_s = 3e-6;
  c.instance.calibration.collective_message_s = 1e-6;
  c.instance.calibration.collective_step_s = 2e-6;
  for (const auto& m : net::network_models()) {
    INFO(m.name);
    for (const auto& [bytes, us] : {std::pair{1e6, 3 + 1 + 1 + 10}, std::pair{1e5, 3 + 1 + 1 + 2}}) {
      // 1 MB at 100 GB/s = 10 us > S; 0.1 MB = 1 us < S: the step's 2 us.
      sim::Engine engine;
      net::Network net(c, m.kind, engine);
      sim::Time done;
      net.start_transfer(0, 1, bytes, [&] { done = engine.now(); });
      engine.run();
      CHECK(done == sim::Time::us(us));
    }
  }
}

TEST_CASE("network models: each registered model has its own name, which parses back to it") {
  std::set<std::string_view> names;
  for (const auto& m : net::network_models()) {
    CHECK(names.insert(m.name).second);
    CHECK(net::parse_network_model(m.name) == m.kind);
    CHECK(net::to_string(m.kind) == m.name);
    CHECK_FALSE(m.description.empty());
  }
  // The spellings experiment files, --network and the reports use.
  CHECK(names == std::set<std::string_view>{"analytic", "flow"});
  CHECK(net::network_model_names() == std::vector<std::string_view>{"analytic", "flow"});
  CHECK_FALSE(net::parse_network_model("Flow").has_value());
}
