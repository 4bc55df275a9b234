// The per-step physics of collectives (include/trnsim/net/closed_form.hpp), checked against
// closed forms worked out by hand, on both network models; and the collective library's choice of
// algorithm (CollectivePolicy) by op, size and span.
#include <catch2/catch.hpp>

#include <limits>
#include <numeric>

#include "test_clusters.hpp"
#include "test_runs.hpp"
#include "trnsim/net/network.hpp"

using namespace trnsim;
using test::iota;
using test::run_one;
using net::Algorithm;
using net::CollectiveOp;
using net::NetworkModelKind;

namespace {
// Both models must give `expected` (picoseconds apart at most: the flow solver rounds each flow's
// end to the picosecond).
void check_both(const hw::ClusterSpec& c, const net::Collective& coll, double expected_us) {
  for (const auto& m : net::network_models()) {
    INFO(m.name << ": " << trnsim::to_string(coll.op) << " " << trnsim::to_string(coll.algorithm) << " " << coll.bytes);
    CHECK(run_one(c, m.kind, coll).to_us() == Approx(expected_us).epsilon(1e-9));
  }
}
void set_costs(hw::ClusterSpec& c, double launch_us, double step_us, double message_us) {
  c.instance.calibration.collective_launch_s = launch_us * 1e-6;
  c.instance.calibration.collective_step_s = step_us * 1e-6;
  c.instance.calibration.collective_message_s = message_us * 1e-6;
}
// An X x Y torus instance whose chips' DMA engines move 100 GB/s, `share` of it for collectives;
// launch L = 10 us, step S = 2 us, message M = 1 us.
hw::ClusterSpec dma_cluster(int x, int y, int cores, double share) {
  auto c = test::torus_cluster(x, y, cores, 1);
  c.instance.chip.dma_bandwidth = 100e9;
  c.instance.calibration.collective_dma_share = share;
  set_costs(c, 10, 2, 1);
  return c;
}
// `op` by `algorithm` of S = 10 MB over ranks {0, 1}: `expected_us` on both models.
void check_pair(const hw::ClusterSpec& c, CollectiveOp op, Algorithm algorithm, double expected_us) {
  check_both(c, {op, {0, 1}, 10e6, algorithm}, expected_us);
}
}  // namespace

TEST_CASE("collective costs: two cores of one chip are limited by the chip's collective DMA throughput") {
  // One chip of two cores (a 1x1 torus: no NeuronLink), DMA 100 GB/s of which collectives get
  // half: D = 50 GB/s on the chip's DMA link. Launch L = 10 us, step S = 2 us, message M = 1 us.
  auto c = dma_cluster(1, 1, 2, 0.5);
  // Ring all-reduce of S over ranks {0, 1}: two steps of S/2 = 5 MB per rank.
  //  Reduce-scatter step: 0 -> 1 and 1 -> 0, and each receiver reads its own 5 MB operand: four
  //  flows on the DMA link, D/4 = 12.5 GB/s each: 5e6 / 12.5e9 = 400 us; + M = 401 us.
  //  All-gather step: two flows, 25 GB/s each: 200 us; + M = 201 us.
  // t = 10 + 401 + 201 = 612 us, i.e. L + 2M + 3S/D: the DMA moves 3S (2S of data, S of operands).
  check_pair(c, CollectiveOp::AllReduce, Algorithm::Ring, 612);
  // All-gather alone: one step, two flows: 10 + 1 + 200 = 211 us.
  check_pair(c, CollectiveOp::AllGather, Algorithm::Ring, 211);
  // The whole DMA throughput (share 1): D = 100 GB/s halves the data terms: 10 + 201 + 101 = 312 us.
  c.instance.calibration.collective_dma_share = 1.0;
  check_pair(c, CollectiveOp::AllReduce, Algorithm::Ring, 312);
  // No DMA figure: copies through HBM at half its 800 GB/s, D = 400 GB/s: 4 flows at 100 GB/s =
  // 50 us, then 2 at 200 GB/s = 25 us: 10 + 51 + 26 = 87 us.
  c.instance.chip.dma_bandwidth = 0;
  check_pair(c, CollectiveOp::AllReduce, Algorithm::Ring, 87);
}

TEST_CASE("collective costs: NeuronLink sends and reductions share the sender's DMA link") {
  // Two chips of one core in a 2x1 torus: both x ports reach the other chip, one link of 200 GB/s
  // with 1 us latency. DMA 100 GB/s, share 1. L = 10, S = 2, M = 1 us.
  const auto c = dma_cluster(2, 1, 1, 1.0);
  // Send-recv 0 -> 1: route = chip 0's DMA link (100 GB/s) + the link (200 GB/s): 10 MB at
  // 100 GB/s = 100 us; t = L + M + 1 us latency + 100 = 112 us.
  check_pair(c, CollectiveOp::SendRecv, Algorithm::Direct, 112);
  // Ring reduce-scatter of S on {0, 1}: one step, 0 -> 1 and 1 -> 0 of S/2 = 5 MB, and each chip
  // reads its 5 MB operand: chip 0's DMA link carries its send and its read, 50 GB/s each:
  // 100 us, though the link itself would carry 5 MB in 25 us. t = 10 + 1 + 1 + 100 = 112 us.
  check_pair(c, CollectiveOp::ReduceScatter, Algorithm::Ring, 112);
  // The all-gather has no operand to read: 5 MB at 100 GB/s = 50 us: 10 + 1 + 1 + 50 = 62 us.
  check_pair(c, CollectiveOp::AllGather, Algorithm::Ring, 62);
}

TEST_CASE("collective costs: a step costs a message per peer, so the latency floor depends on op and group") {
  // GPUs behind one NVSwitch, 100 GB/s and 1 us per GPU link (a GPU's link is its bottleneck).
  // L = 10 us, S = 5 us, M = 2 us.
  auto c = test::gpu_cluster(8, 1);
  set_costs(c, 10, 5, 2);
  // Direct (mesh) all-gather of 4 KB on n ranks: one step; each rank posts n-1 messages of 4/n kB
  // (data far under S): t = L + (n-1) M + 1 us + S.
  check_both(c, {CollectiveOp::AllGather, iota(4), 4e3, Algorithm::Direct}, 10 + 3 * 2 + 1 + 5);  // 22 us
  check_both(c, {CollectiveOp::AllGather, iota(8), 4e3, Algorithm::Direct}, 10 + 7 * 2 + 1 + 5);  // 30 us
  // Mesh all-reduce: two such steps (the first reduces): L + 2((n-1) M + 1 + S) = 10 + 2 x 12 = 34 us.
  check_both(c, {CollectiveOp::AllReduce, iota(4), 4e3, Algorithm::Direct}, 34);
  // Ring all-gather on 4: 3 steps of one message each: 10 + 3 x (2 + 1 + 5) = 34 us; all-reduce 6
  // steps: 10 + 6 x 8 = 58 us.
  check_both(c, {CollectiveOp::AllGather, iota(4), 4e3, Algorithm::Ring}, 34);
  check_both(c, {CollectiveOp::AllReduce, iota(4), 4e3, Algorithm::Ring}, 58);
  // Large mesh all-gather, 4 MB on 4: each GPU sends 3 flows of 1 MB on its 100 GB/s link and
  // receives 3: 33.3 GB/s each, 30 us > S. t = 10 + 3 x 2 + 1 + 30 = 47 us.
  check_both(c, {CollectiveOp::AllGather, iota(4), 4e6, Algorithm::Direct}, 47);
}

TEST_CASE("collective costs: a step that crosses EFA pays the EFA latency, with the same per-step costs") {
  // Two nodes of one GPU: the route is GPU -> rail leaf -> GPU, latency 10 us (NIC) + 1 us
  // (switch), 25 GB/s per GPU. L = 10, S = 5, M = 1 us: nothing fitted for multi-instance.
  auto c = test::gpu_cluster(1, 2);
  set_costs(c, 10, 5, 1);
  // Ring all-reduce of 1 MB on 2 ranks: 2 steps of 0.5 MB at 25 GB/s = 20 us:
  // 10 + 2 x (1 + 11 + 20) = 74 us.
  check_both(c, {CollectiveOp::AllReduce, {0, 1}, 1e6, Algorithm::Ring}, 74);
  // Small: each step its synchronisation: 10 + 2 x (1 + 11 + 5) = 44 us.
  check_both(c, {CollectiveOp::AllReduce, {0, 1}, 1e3, Algorithm::Ring}, 44);
  // A Trainium route over EFA does not cross the DMA link (the NIC reads device memory): a DMA
  // link of 1 GB/s does not slow it. Two 1-chip instances, one core each: 10 + 2 x (1 + 11 + 20).
  auto t = test::torus_cluster(1, 1, 1, 2);
  t.instance.chip.dma_bandwidth = 1e9;
  t.instance.efa = {25e9, 10e-6};
  set_costs(t, 10, 5, 1);
  for (const auto& m : net::network_models()) {
    INFO(m.name);
    sim::Engine engine;
    net::Network net(t, m.kind, engine);
    sim::Time done;
    net.start_transfer(0, 1, 1e6, [&] { done = engine.now(); });  // 1 MB at 25 GB/s = 40 us
    engine.run();
    CHECK(done.to_us() == Approx(10 + 1 + 11 + 40).epsilon(1e-9));
  }
}

TEST_CASE("collective costs: a transfer is one DMA stream, a ring in both directions runs two") {
  // GPUs behind one NVSwitch, 100 GB/s and 1 us per route; L = 10, S = 5, M = 1 us; one stream
  // at most 10 GB/s (well below the links: the stream rate sets the pace).
  auto c = test::gpu_cluster(4, 1);
  set_costs(c, 10, 5, 1);
  c.instance.calibration.collective_stream_bandwidth = 10e9;
  // Ring all-gather of 4 MB on 4: 3 steps of 1 MB to one peer at 10 GB/s = 100 us:
  // 10 + 3 x (1 + 100 + 1) = 316 us.
  check_both(c, {CollectiveOp::AllGather, iota(4), 4e6, Algorithm::Ring}, 316);
  // Both directions: 3 steps of 0.5 MB to each of two peers, two streams at 10 GB/s each (50 us),
  // two messages: 10 + 3 x (2 + 50 + 1) = 169 us.
  check_both(c, {CollectiveOp::AllGather, iota(4), 4e6, Algorithm::BidirectionalRing}, 169);
  // On two ranks both directions lead to the one peer: one stream, as the ring (the schedule
  // keeps one transfer per pair and step). All-gather of 4 MB: 1 step of 2 MB: 10 + 1 + 200 + 1.
  check_both(c, {CollectiveOp::AllGather, {0, 1}, 4e6, Algorithm::BidirectionalRing}, 212);
  check_both(c, {CollectiveOp::AllGather, {0, 1}, 4e6, Algorithm::Ring}, 212);
}

TEST_CASE("collective policy: the library chooses by op, size and whether the group spans instances") {
  // Two instances of a 4x4 torus with 2 cores per chip: 32 ranks each.
  auto c = test::torus_cluster(4, 4, 2, 2);
  set_costs(c, 20, 5, 1);
  net::CollectivePolicy policy;
  policy.library = "test";
  policy.rules = {
      {CollectiveOp::AllReduce, 1e6, Algorithm::Ring, Algorithm::HalvingDoubling},
      {CollectiveOp::AllReduce, std::numeric_limits<double>::infinity(), Algorithm::BidirectionalRing,
       Algorithm::Hierarchical},
  };
  sim::Engine engine;
  net::Network net(c, NetworkModelKind::Analytic, engine, policy);
  const auto inside = iota(32), both = iota(64);
  SECTION("within one instance, by size (max_bytes inclusive)") {
    CHECK(net.choose({CollectiveOp::AllReduce, inside, 1024, Algorithm::Auto}) == Algorithm::Ring);
    CHECK(net.choose({CollectiveOp::AllReduce, inside, 1e6, Algorithm::Auto}) == Algorithm::Ring);
    CHECK(net.choose({CollectiveOp::AllReduce, inside, 1e6 + 1, Algorithm::Auto}) == Algorithm::BidirectionalRing);
  }
  SECTION("across instances, by size") {
    CHECK(net.choose({CollectiveOp::AllReduce, both, 1024, Algorithm::Auto}) == Algorithm::HalvingDoubling);
    CHECK(net.choose({CollectiveOp::AllReduce, both, 64e6, Algorithm::Auto}) == Algorithm::Hierarchical);
    // Two ranks, one in each instance, span them too.
    CHECK(net.choose({CollectiveOp::AllReduce, {0, 32}, 64e6, Algorithm::Auto}) == Algorithm::Hierarchical);
  }
  SECTION("the library's time is its algorithm's, whatever the optimum") {
    const net::Collective lib{CollectiveOp::AllReduce, inside, 1024, Algorithm::Auto};
    const net::Collective ring{CollectiveOp::AllReduce, inside, 1024, Algorithm::Ring};
    const net::Collective opt{CollectiveOp::AllReduce, inside, 1024, Algorithm::Optimal};
    CHECK(net.estimate(lib) == net.estimate(ring));
    // 62 ring steps of at least 1 + 5 us against the optimum's few steps: the what-if is faster.
    CHECK(net.choose(opt) != Algorithm::Ring);
    CHECK(net.estimate(opt) < net.estimate(lib));
  }
  SECTION("an algorithm that cannot run the group, or an op without rules, falls back to the optimum") {
    // 24 ranks (12 per instance): halving-doubling needs a power of two.
    std::vector<int> odd = iota(12);
    for (int r : iota(12, 32)) odd.push_back(r);
    CHECK(net.choose({CollectiveOp::AllReduce, odd, 1024, Algorithm::Auto}) ==
          net.choose({CollectiveOp::AllReduce, odd, 1024, Algorithm::Optimal}));
    CHECK(net.choose({CollectiveOp::AllGather, inside, 1024, Algorithm::Auto}) ==
          net.choose({CollectiveOp::AllGather, inside, 1024, Algorithm::Optimal}));
  }
  SECTION("optimal: true takes the optimum for every op; a forced algorithm stays forced") {
    policy.optimal = true;
    sim::Engine e2;
    net::Network what_if(c, NetworkModelKind::Analytic, e2, policy);
    CHECK(what_if.choose({CollectiveOp::AllReduce, inside, 1024, Algorithm::Auto}) ==
          what_if.choose({CollectiveOp::AllReduce, inside, 1024, Algorithm::Optimal}));
    CHECK(what_if.choose({CollectiveOp::AllReduce, inside, 1024, Algorithm::Torus2D}) == Algorithm::Torus2D);
  }
  SECTION("the flow model runs what the library chose") {
    const net::Collective lib{CollectiveOp::AllReduce, both, 64e6, Algorithm::Auto};
    const net::Collective hier{CollectiveOp::AllReduce, both, 64e6, Algorithm::Hierarchical};
    CHECK(run_one(c, NetworkModelKind::Flow, lib, policy) == run_one(c, NetworkModelKind::Flow, hier, policy));
  }
}
