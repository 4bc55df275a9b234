#include <catch2/catch.hpp>

#include <algorithm>

#include "test_clusters.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"

using namespace trnsim;
using test::iota;
using net::Algorithm;
using net::CollectiveOp;

namespace {
net::Schedule sched(const hw::ClusterSpec& c, CollectiveOp op, std::vector<int> ranks, double bytes, Algorithm a) {
  const hw::DeviceMap dm(c);
  return net::make_schedule(net::Collective{op, std::move(ranks), bytes, a}, a, c, dm);
}
}  // namespace

TEST_CASE("schedules: step counts and bytes follow each algorithm's definition") {
  const auto c = test::torus_cluster(4, 4, 2, 2);  // 2 instances x 32 ranks
  const double s = 64.0 * 1024;
  SECTION("ring all-reduce: 2(n-1) steps, each rank sends 2(n-1)/n S") {
    const auto r = sched(c, CollectiveOp::AllReduce, iota(32), s, Algorithm::Ring);
    CHECK(r.steps() == 62);
    CHECK(r.bytes_sent() == Approx(32 * 62 * s / 32));
  }
  SECTION("bidirectional ring: same steps, same bytes, two transfers per rank and step") {
    const auto r = sched(c, CollectiveOp::AllReduce, iota(32), s, Algorithm::BidirectionalRing);
    CHECK(r.steps() == 62);
    CHECK(r.phases[0].transfers.size() == 64);
    CHECK(r.bytes_sent() == Approx(62 * s));
  }
  SECTION("reduce-scatter and all-gather: n-1 steps of S/n") {
    CHECK(sched(c, CollectiveOp::ReduceScatter, iota(32), s, Algorithm::Ring).steps() == 31);
    CHECK(sched(c, CollectiveOp::AllGather, iota(32), s, Algorithm::Ring).bytes_sent() == Approx(31 * s));
  }
  SECTION("hierarchical all-reduce over 2 x 32: 31 + 2 + 31 steps, same bytes as inner and outer rings") {
    const auto r = sched(c, CollectiveOp::AllReduce, iota(64), s, Algorithm::Hierarchical);
    CHECK(r.steps() == 31 + 2 + 31);
    // Inside: 64 ranks x 31 steps x S/32, twice (each step a ring both ways, S/64 to each
    // neighbour); across: 64 ranks x 2 steps x S/64.
    CHECK(r.bytes_sent() == Approx(2 * 64 * 31 * s / 32 + 64 * 2 * s / 64));
    CHECK(r.phases[0].transfers.size() == 2 * 64);  // both ways inside
    CHECK(r.phases[0].transfers[0].bytes == s / 64);
  }
  SECTION("hierarchical-mesh all-reduce over 2 x 32: 1 + 1 + 1 + 1 steps, a mesh inside and across") {
    const auto r = sched(c, CollectiveOp::AllReduce, iota(64), s, Algorithm::HierarchicalMesh);
    CHECK(r.steps() == 4);
    // Inside: each of 64 ranks sends S/32 to its 31 local peers, twice (reduce-scatter, then
    // all-gather); across: each sends S/64 to its one peer of the same local index, twice: the
    // same bytes as the ring form, in 4 steps instead of 64.
    CHECK(r.phases[0].transfers.size() == 64 * 31);
    CHECK(r.phases[0].reduce);
    CHECK(r.phases[1].reduce);
    CHECK_FALSE(r.phases[2].reduce);
    CHECK(r.bytes_sent() == Approx(2 * 64 * 31 * s / 32 + 64 * 2 * s / 64));
    CHECK(sched(c, CollectiveOp::ReduceScatter, iota(64), s, Algorithm::HierarchicalMesh).steps() == 2);
    CHECK(sched(c, CollectiveOp::AllGather, iota(64), s, Algorithm::HierarchicalMesh).steps() == 2);
  }
  SECTION("torus-2d all-reduce on one 4x4 instance of 2 cores: rows of 8, columns of 4") {
    const auto r = sched(c, CollectiveOp::AllReduce, iota(32), s, Algorithm::Torus2D);
    CHECK(r.steps() == 7 + 2 * 3 + 7);
  }
  SECTION("halving-doubling: 2 log2 n steps, bytes S/2 + S/4 + ... each way") {
    const auto r = sched(c, CollectiveOp::AllReduce, iota(16), s, Algorithm::HalvingDoubling);
    CHECK(r.steps() == 8);
    CHECK(r.bytes_sent() == Approx(16 * 2 * (s - s / 16)));
  }
  SECTION("direct all-to-all: one step of n(n-1) pieces of S/n") {
    const auto r = sched(c, CollectiveOp::AllToAll, iota(8), s, Algorithm::Direct);
    CHECK(r.steps() == 1);
    CHECK(r.phases[0].transfers.size() == 56);
    CHECK(r.bytes_sent() == Approx(7 * s));
  }
  SECTION("ring broadcast: a chain of n chunks, 2n-2 steps, S to each of n-1 ranks") {
    const auto r = sched(c, CollectiveOp::Broadcast, {5, 1, 2, 3}, s, Algorithm::Ring);
    CHECK(r.steps() == 6);
    CHECK(r.bytes_sent() == Approx(3 * s));
  }
  SECTION("binomial broadcast: ceil(log2 n) steps") {
    CHECK(sched(c, CollectiveOp::Broadcast, iota(5), s, Algorithm::HalvingDoubling).steps() == 3);
  }
}

TEST_CASE("schedules: every algorithm sends at most one transfer per pair and step") {
  // The invariant the stream cap relies on (collective.hpp, Phase): checked on groups of 2 (where a
  // ring in both directions meets the same peer twice), 3, 4, 8 and 2 x 4 ranks over two
  // instances, for every operation each concrete algorithm supports.
  const auto c = test::torus_cluster(4, 4, 2, 2);
  const hw::DeviceMap dm(c);
  const std::vector<std::vector<int>> groups{iota(2), iota(3), iota(4), iota(8), {0, 1, 2, 3, 32, 33, 34, 35}};
  const CollectiveOp ops[] = {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
                              CollectiveOp::AllToAll, CollectiveOp::Broadcast};
  int checked = 0;
  for (Algorithm a : net::kConcreteAlgorithms) {
    for (CollectiveOp op : ops) {
      for (const auto& g : groups) {
        const net::Collective coll{op, g, 4096.0, a};
        if (!net::supports(a, coll, c, dm)) continue;
        const auto s = net::make_schedule(coll, a, c, dm);
        for (const auto& p : s.phases) {
          std::vector<std::pair<int, int>> pairs;
          for (const auto& t : p.transfers) pairs.emplace_back(t.src, t.dst);
          std::sort(pairs.begin(), pairs.end());
          INFO(trnsim::to_string(a) << " " << trnsim::to_string(op) << " on " << g.size() << " ranks");
          CHECK(std::adjacent_find(pairs.begin(), pairs.end()) == pairs.end());
        }
        ++checked;
      }
    }
  }
  CHECK(checked >= 40);  // most combinations run: the check is not vacuous
}

TEST_CASE("schedules: a ring visits a torus instance's chips in snake order") {
  const auto c = test::torus_cluster(4, 4, 1, 1);
  const hw::DeviceMap dm(c);
  const auto order = net::ring_order(iota(16), c, dm);
  CHECK(order == std::vector<int>{0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11, 15, 14, 13, 12});
}

TEST_CASE("schedules: algorithms that cannot run a collective say why") {
  const auto c = test::torus_cluster(4, 4, 1, 2);
  CHECK_THROWS_AS(sched(c, CollectiveOp::AllReduce, iota(12), 1024, Algorithm::HalvingDoubling), InputError);
  CHECK_THROWS_AS(sched(c, CollectiveOp::AllReduce, iota(16), 1024, Algorithm::Hierarchical), InputError);
  CHECK_THROWS_AS(sched(c, CollectiveOp::AllToAll, iota(4), 1024, Algorithm::Ring), InputError);
  CHECK_THROWS_AS(sched(c, CollectiveOp::AllReduce, {0, 0, 1}, 1024, Algorithm::Ring), InputError);
  CHECK_THROWS_AS(sched(c, CollectiveOp::AllReduce, {0, 99}, 1024, Algorithm::Ring), InputError);
  CHECK_THROWS_AS(sched(c, CollectiveOp::SendRecv, {0, 1, 2}, 1024, Algorithm::Direct), InputError);
  CHECK_THROWS_AS(net::parse_algorithm("tree"), InputError);
  CHECK(net::parse_op("all-gather") == CollectiveOp::AllGather);
}

TEST_CASE("schedules: bus bandwidth factors are nccl-tests'") {
  CHECK(net::bus_bandwidth_factor(CollectiveOp::AllReduce, 8) == Approx(14.0 / 8));
  CHECK(net::bus_bandwidth_factor(CollectiveOp::AllGather, 8) == Approx(7.0 / 8));
  CHECK(net::bus_bandwidth_factor(CollectiveOp::SendRecv, 2) == 1);
}

TEST_CASE("schedules: hierarchical runs where every instance holds as many of the group's ranks, two or more") {
  const auto c = test::gpu_cluster(8, 3);  // instances of ranks 0-7, 8-15, 16-23
  const hw::DeviceMap dm(c);
  auto runs = [&](CollectiveOp op, std::vector<int> ranks, std::string_view* why = nullptr) {
    return net::supports(Algorithm::Hierarchical, net::Collective{op, std::move(ranks), 1e6, Algorithm::Hierarchical},
                         c, dm, why);
  };
  std::string_view why;
  CHECK(runs(CollectiveOp::AllReduce, {0, 1, 8, 9}));
  CHECK(runs(CollectiveOp::ReduceScatter, {17, 9, 1, 16, 8, 0}));  // any order: 2 in each of 3 instances
  CHECK(runs(CollectiveOp::AllGather, {3, 12, 20}));
  CHECK_FALSE(runs(CollectiveOp::AllReduce, {0, 1, 2, 8}, &why));  // 3 ranks in instance 0, 1 in instance 1
  CHECK(why == "hierarchical needs the same number of ranks in every instance");
  CHECK_FALSE(runs(CollectiveOp::AllReduce, {0, 8, 9, 16}, &why));  // 1, 2, 1
  CHECK(why == "hierarchical needs the same number of ranks in every instance");
  CHECK_FALSE(runs(CollectiveOp::AllReduce, {4, 5, 6, 7}, &why));
  CHECK(why == "hierarchical needs ranks in more than one instance");
  CHECK_FALSE(runs(CollectiveOp::Broadcast, {0, 8}, &why));
  CHECK_FALSE(runs(CollectiveOp::AllReduce, {}, &why));  // no instance holds a rank: not "the same number"
  CHECK(why == "hierarchical needs the same number of ranks in every instance");
  CHECK(runs(CollectiveOp::AllReduce, {0, 0, 8, 9}));  // a repeated rank counts twice (make_schedule refuses it)
  CHECK_THROWS_AS(runs(CollectiveOp::AllReduce, {0, 24}), InputError);  // rank 24 is past the cluster
  // A group it supports is one it can schedule: one group of ranks per instance.
  CHECK_NOTHROW(net::make_schedule(net::Collective{CollectiveOp::AllReduce, {17, 9, 1, 16, 8, 0}, 1e6, Algorithm::Hierarchical},
                                   Algorithm::Hierarchical, c, dm));
}
