// Replica sets: a call on a set of identical groups (or pairs) costs one engine event where the
// model collapses it (analytic), with the completion time and link traffic of one call per group.
#include <catch2/catch.hpp>

#include <memory>
#include <utility>
#include <vector>

#include "test_clusters.hpp"
#include "test_runs.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/fabric.hpp"
#include "trnsim/net/network.hpp"

using namespace trnsim;
using net::Algorithm;
using net::CollectiveOp;
using net::NetworkModelKind;

namespace {

// 8 GPUs behind one switch, the calibration of the ring test in network_model_test.cpp:
// launch L = 10 us, message M = 2 us, step synchronisation S = 5 us, 1 us per ring neighbour.
hw::ClusterSpec ring_cluster(int nodes) {
  auto c = test::gpu_cluster(8, nodes);
  c.instance.calibration.collective_launch_s = 10e-6;
  c.instance.calibration.collective_message_s = 2e-6;
  c.instance.calibration.collective_step_s = 5e-6;
  return c;
}

// Completion of the last of one start() per group, on a fresh network.
sim::Time last_of_groups(const hw::ClusterSpec& c, const std::vector<std::vector<int>>& groups, double bytes) {
  sim::Engine engine;
  net::Network net(c, NetworkModelKind::Analytic, engine);
  sim::Time last;
  for (const auto& g : groups) {
    net.start(net::Collective{CollectiveOp::AllReduce, g, bytes, Algorithm::Ring}, [&] { last = engine.now(); });
  }
  engine.run();
  return last;
}

// `count` trn2u-like UltraServers of 4 instances (4 x 4 torus, 2 ranks per chip: 128 ranks each)
// over EFA, 4 spines.
hw::ClusterSpec ultraserver_cluster(int count = 2) {
  auto c = test::ultraserver_cluster(4, 4, 2, 4 * count, 4);
  c.fabric.spines = 4;
  return c;
}

// Checks that both networks' links carried traffic and the same bytes, link by link (exactly:
// the same additions in an order that changes no sum); returns how many are of `kind`.
int same_links(const net::Network& a, const net::Network& b, net::LinkKind kind) {
  const auto x = a.link_usage();
  const auto y = b.link_usage();
  REQUIRE(x.size() == y.size());
  int of_kind = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(x[i].id == y[i].id);
    CHECK(x[i].bytes == y[i].bytes);
    of_kind += x[i].kind == kind;
  }
  return of_kind;
}

// When the last of one start_transfer() per pair completes, on a fresh engine.
sim::Time last_transfer_time(net::Network& net, sim::Engine& engine,
                             const std::vector<std::pair<std::int32_t, std::int32_t>>& pairs, double bytes) {
  sim::Time last;
  for (const auto& [src, dst] : pairs) net.start_transfer(src, dst, bytes, [&] { last = std::max(last, engine.now()); });
  engine.run();
  return last;
}

// When one call on the pairs as a pair set completes, on a fresh engine.
sim::Time pair_set_time(net::Network& net, sim::Engine& engine,
                        const std::vector<std::pair<std::int32_t, std::int32_t>>& pairs, double bytes) {
  sim::Time done;
  net.start_pair_set(net.add_pair_set(pairs), bytes, [&] { done = engine.now(); });
  engine.run();
  return done;
}

}  // namespace

TEST_CASE("network: a group set is one event at its slowest group's time, its links carry every group's bytes") {
  const double s = 8e6;
  SECTION("two 4-GPU rings on one switch, started three times") {
    const auto c = ring_cluster(1);
    sim::Engine engine;
    net::Network net(c, NetworkModelKind::Analytic, engine);
    REQUIRE(net.collapses_replicas());
    const std::vector<std::int32_t> ranks{0, 1, 2, 3, 4, 5, 6, 7};
    const net::ReplicaSetId set = net.add_group_set(ranks, 4);
    std::vector<sim::Time> done;
    const net::Collective call{CollectiveOp::AllReduce, {}, s, Algorithm::Ring};
    for (int i = 0; i < 3; ++i) {
      engine.schedule(sim::Time::us(1000 * i), [&] { net.start_group_set(call, set, [&] { done.push_back(engine.now()); }); });
    }
    engine.run();
    // Per group: 2(n-1) = 6 steps of M + 1 us + max(S, S/n / 100 GB/s = 20 us) = 23 us, + L:
    // 148 us after each start. Three starts and three completions: 6 events, not 3 + 2 x 3.
    REQUIRE(done.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK(done[static_cast<std::size_t>(i)] == sim::Time::us(1000 * i + 148));
    CHECK(engine.events_processed() == 6);
    // Each rank sends 2(n-1) chunks of S/n = 1.5 S to its ring neighbour: 1.5 S on its GPU ->
    // switch link and 1.5 S on the receiver's switch -> GPU link; the n-1 reduce steps read
    // (n-1)/n S = 0.75 S through each receiver's DMA link. Three calls of both groups.
    int dma_links = 0, other_links = 0;
    double total = 0;
    for (const auto& u : net.link_usage()) {
      const bool dma = u.kind == net::LinkKind::Dma;
      ++(dma ? dma_links : other_links);
      total += u.bytes;
      CHECK(u.bytes == Approx(3 * (dma ? 0.75 : 1.5) * s).epsilon(1e-12));
    }
    // 8 DMA links, 8 uplinks and 8 downlinks: 3 x 8 x (1.5 + 1.5 + 0.75) S in all.
    CHECK(dma_links == 8);
    CHECK(other_links == 16);
    CHECK(total == Approx(3 * 8 * (1.5 + 1.5 + 0.75) * s).epsilon(1e-12));
  }
  SECTION("groups of different speed: the set ends with the slowest, as one call per group would") {
    // Two nodes: {0, 1, 2, 3} stays on one switch, {4, 5, 8, 9} crosses EFA at 25 GB/s per GPU.
    const auto c = ring_cluster(2);
    const std::vector<std::vector<int>> groups{{0, 1, 2, 3}, {4, 5, 8, 9}};
    const sim::Time fast = last_of_groups(c, {groups[0]}, s);
    const sim::Time slow = last_of_groups(c, {groups[1]}, s);
    REQUIRE(fast == sim::Time::us(148));
    REQUIRE(slow > fast);
    sim::Engine engine;
    net::Network net(c, NetworkModelKind::Analytic, engine);
    const std::vector<std::int32_t> ranks{0, 1, 2, 3, 4, 5, 8, 9};
    sim::Time done;
    net.start_group_set(net::Collective{CollectiveOp::AllReduce, {}, s, Algorithm::Ring}, net.add_group_set(ranks, 4),
                        [&] { done = engine.now(); });
    engine.run();
    CHECK(done == slow);
    CHECK(done == last_of_groups(c, groups, s));
  }
}

TEST_CASE("network: a pair set is one event at its slowest transfer's time, each route carrying the bytes") {
  // Pairs 0 -> 1 (one switch: 2 links of 100 GB/s) and 2 -> 9 (across EFA at 25 GB/s): the set
  // ends when the slower transfer, started alone, would.
  const auto c = ring_cluster(2);
  const double bytes = 1e6;
  auto alone = [&](int src, int dst) {
    sim::Engine engine;
    net::Network net(c, NetworkModelKind::Analytic, engine);
    sim::Time done;
    net.start_transfer(src, dst, bytes, [&] { done = engine.now(); });
    engine.run();
    return done;
  };
  sim::Engine engine;
  net::Network net(c, NetworkModelKind::Analytic, engine);
  const std::vector<std::pair<std::int32_t, std::int32_t>> pairs{{0, 1}, {2, 9}};
  const net::ReplicaSetId set = net.add_pair_set(pairs);
  sim::Time done;
  net.start_pair_set(set, bytes, [&] { done = engine.now(); });
  net.start_pair_set(set, bytes, [&] {});
  engine.run();
  CHECK(alone(2, 9) > alone(0, 1));
  CHECK(done == alone(2, 9));
  CHECK(engine.events_processed() == 2);
  // Two calls: 2 MB on every link of either route; the 0 -> 1 route is GPU 0's uplink and GPU 1's
  // downlink on the switch.
  int links = 0;
  for (const auto& u : net.link_usage()) {
    ++links;
    CHECK(u.bytes == 2 * bytes);
  }
  CHECK(links >= 4);
}

TEST_CASE("network: the flow model leaves replica sets to one call per group") {
  sim::Engine engine;
  net::Network net(ring_cluster(1), NetworkModelKind::Flow, engine);
  CHECK_FALSE(net.collapses_replicas());
  const std::vector<std::int32_t> ranks{0, 1, 2, 3};
  const net::ReplicaSetId set = net.add_group_set(ranks, 2);
  CHECK_THROWS_AS(net.start_group_set(net::Collective{CollectiveOp::AllReduce, {}, 1e6, Algorithm::Ring}, set, [] {}),
                  InternalError);
  CHECK_THROWS_AS(net.add_group_set(ranks, 3), InputError);
}

TEST_CASE("network: networks sharing a fabric price group sets as each on its own fabric would") {
  // A sweep's worker reuses one fabric, and with it the group terms an earlier plan computed
  // (net/fabric.hpp). A second network on that fabric, whose set lists the same groups under
  // another id and order, at another size, must get what a network with a fresh fabric gets.
  const auto c = ring_cluster(2);
  const double s = 8e6;
  const auto fabric = std::make_shared<net::Fabric>(c);
  const net::Collective call{CollectiveOp::AllReduce, {}, s, Algorithm::Ring};
  {
    sim::Engine engine;
    net::Network first(fabric, NetworkModelKind::Analytic, engine);
    const std::vector<std::int32_t> ranks{0, 1, 2, 3, 4, 5, 8, 9};
    sim::Time done;
    first.start_group_set(call, first.add_group_set(ranks, 4), [&] { done = engine.now(); });
    engine.run();
    CHECK(done == last_of_groups(c, {{0, 1, 2, 3}, {4, 5, 8, 9}}, s));
  }
  // Runs the second plan's calls on `net`: a set of one group alone at 2 S, then the two groups
  // of the first plan in the other order at 2 S; returns both completion times.
  auto second_plan = [&](net::Network& net, sim::Engine& engine) {
    const std::vector<std::int32_t> alone{0, 1, 2, 3};
    const std::vector<std::int32_t> swapped{4, 5, 8, 9, 0, 1, 2, 3};
    const net::ReplicaSetId a = net.add_group_set(alone, 4);
    const net::ReplicaSetId b = net.add_group_set(swapped, 4);
    net::Collective twice = call;
    twice.bytes = 2 * s;
    std::pair<sim::Time, sim::Time> done;
    net.start_group_set(twice, a, [&] { done.first = engine.now(); });
    engine.run();
    net.start_group_set(twice, b, [&] { done.second = engine.now(); });
    engine.run();
    return done;
  };
  sim::Engine shared_engine, own_engine;
  net::Network shared(fabric, NetworkModelKind::Analytic, shared_engine);
  net::Network own(c, NetworkModelKind::Analytic, own_engine);
  const auto [shared_alone, shared_both] = second_plan(shared, shared_engine);
  const auto [own_alone, own_both] = second_plan(own, own_engine);
  // One group at 2 S: 6 steps of M + 1 us + max(S, 2 S / 4 / 100 GB/s = 40 us) = 43 us, + L = 268 us.
  CHECK(own_alone == sim::Time::us(268));
  CHECK(shared_alone == own_alone);
  CHECK(shared_both - shared_alone == own_both - own_alone);
  CHECK(own_both - own_alone == last_of_groups(c, {{4, 5, 8, 9}, {0, 1, 2, 3}}, 2 * s));
  // Link by link, the same bytes (in the same order of additions: equal, not approximately).
  const auto shared_links = shared.link_usage();
  const auto own_links = own.link_usage();
  REQUIRE(shared_links.size() == own_links.size());
  for (std::size_t i = 0; i < own_links.size(); ++i) {
    CHECK(shared_links[i].id == own_links[i].id);
    CHECK(shared_links[i].bytes == own_links[i].bytes);
  }
}

TEST_CASE("network: groups inside later UltraServers cost what one call per group costs, as images of the first's") {
  // Two trn2u-like UltraServers of 4 instances (4 x 4 torus, 2 ranks per chip: 128 ranks each)
  // over EFA. The analytic model prices a group inside UltraServer 1 as the image of the same
  // group in UltraServer 0 (net-internal unit_translation.hpp); one start() per group routes
  // each group itself. Both must give the same completion and, link by link, the same bytes.
  const auto c = ultraserver_cluster();
  const double s = 8e6;
  // Per UltraServer u (first rank 128 u): 8 ranks on the torus row of chips 0-3 of instance 0,
  // the same row in instance 2, and a Z ring over chip 5's first core in its 4 instances (32
  // ranks per instance). Two last groups cross EFA on the same chips, the second one core on.
  std::vector<std::vector<int>> groups;
  for (int u = 0; u < 2; ++u) {
    groups.push_back(test::iota(8, 128 * u));
    groups.push_back(test::iota(8, 128 * u + 64));
    groups.push_back({128 * u + 10, 128 * u + 42, 128 * u + 74, 128 * u + 106});
  }
  groups.push_back({0, 128, 32, 160});
  groups.push_back({1, 129, 33, 161});  // the same chips one core on: priced as the image of the last
  for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather}) {
    INFO("op " << static_cast<int>(op));
    std::vector<std::int32_t> ranks;
    for (const auto& g : groups) {
      if (g.size() == 4) ranks.insert(ranks.end(), g.begin(), g.end());
    }
    std::vector<std::int32_t> rows;
    for (const auto& g : groups) {
      if (g.size() == 8) rows.insert(rows.end(), g.begin(), g.end());
    }
    test::AnalyticTwins t(c);
    sim::Time each_rows, each_rings, set_rows, set_rings;
    for (const auto& g : groups) {
      sim::Time& last = g.size() == 8 ? each_rows : each_rings;
      t.each.start(net::Collective{op, g, s, Algorithm::Ring}, [&] { last = std::max(last, t.each_engine.now()); });
    }
    t.each_engine.run();
    const net::Collective call{op, {}, s, Algorithm::Ring};
    t.sets.start_group_set(call, t.sets.add_group_set(rows, 8), [&] { set_rows = t.set_engine.now(); });
    t.sets.start_group_set(call, t.sets.add_group_set(ranks, 4), [&] { set_rings = t.set_engine.now(); });
    t.set_engine.run();
    CHECK(set_rows == each_rows);
    CHECK(set_rings == each_rings);
    CHECK(t.set_engine.events_processed() == 2);
    // The same links, each with the same bytes: one start() adds a group's bytes link by link in
    // group order, as the set's tally does, so the sums are equal, not just close.
    const int z_links = same_links(t.each, t.sets, net::LinkKind::UltraServerZ);
    // Both Z rings (4 instances each) send one way round: 4 Z links each. The EFA groups run in
    // ring order (ring_order: by instance), 0 -> 32 -> 128 -> 160 -> 0: the steps 0 -> 32 and
    // 128 -> 160 stay inside an UltraServer, on one Z link each; their core-1 twins are on the
    // same chips, so on the same two Z links.
    CHECK(z_links == 8 + 2);
    // UltraServer 1's rows and ring, and the second EFA group, were not routed: only their images.
    CHECK(t.set_fabric->router.cached_routes() < t.each_fabric->router.cached_routes());
  }
}

// Eight UltraServers like ultraserver_cluster()'s (128 ranks each: rank r is chip r / 2, its
// instance chip / 16 and rail chip mod 16), leaves of 8 instances (two UltraServers) and 4 spines:
// the Clos translates by whole leaf groups, a period of two UltraServers.
hw::ClusterSpec clos_period_cluster() {
  auto c = ultraserver_cluster(8);
  c.fabric.leaf_radix = 8;
  return c;
}

// Four ranks in UltraServers u and v, `core` cores into their chips: ranks 0 and 36 of u (chip
// 0, rail 0 of its first instance; chip 18, rail 2 of its second), ranks 10 and 98 of v (chip 5,
// rail 5 of its first; chip 49, rail 1 of its fourth). Its ring crosses rails, so its routes
// between instances go over spines.
std::vector<int> across(int u, int v, int core = 0) {
  return {128 * u + core, 128 * u + 36 + core, 128 * v + 10 + core, 128 * v + 98 + core};
}

TEST_CASE("network: groups across UltraServers cost what one call per group costs, as images whole leaf groups back") {
  // A group across several UltraServers is priced as the image of the group that many whole Clos
  // periods (leaf groups of instances) back, its EFA ports, uplinks and downlinks shifted
  // (net-internal unit_translation.hpp; the spine of a pair depends on its place in the leaf group
  // and its offsets, router.hpp). One start() per group routes each group itself. Both must give
  // the same completion and, link by link, the same bytes.
  const auto c = clos_period_cluster();
  const double s = 6e6;
  const std::vector<std::vector<int>> groups{
      across(0, 2),     // its own plan
      across(4, 6),     // the image of the first, 4 UltraServers (two periods) on
      across(1, 3),     // its own plan (UltraServer 1 is no whole period)
      across(5, 7),     // the image of the last, 4 on
      across(3, 5),     // its image 2 back, (1, 3): the same plan as the third
      across(2, 3),     // its image 2 back, (0, 1): scheduled for it, then moved
      across(0, 2, 1),  // the first one core on: its image the first
  };
  // Ring, and the policy's choice (asked of each group's image once per call: the same choice).
  for (const auto& [op, algorithm] : {std::pair{CollectiveOp::AllReduce, Algorithm::Ring},
                                      std::pair{CollectiveOp::AllGather, Algorithm::Ring},
                                      std::pair{CollectiveOp::AllReduce, Algorithm::Auto},
                                      std::pair{CollectiveOp::ReduceScatter, Algorithm::Auto}}) {
    INFO("op " << static_cast<int>(op) << ", algorithm " << static_cast<int>(algorithm));
    std::vector<std::int32_t> ranks;
    for (const auto& g : groups) ranks.insert(ranks.end(), g.begin(), g.end());
    test::AnalyticTwins t(c);
    sim::Time each_last, set_done;
    for (const auto& g : groups) {
      t.each.start(net::Collective{op, g, s, algorithm}, [&] { each_last = std::max(each_last, t.each_engine.now()); });
    }
    t.each_engine.run();
    t.sets.start_group_set(net::Collective{op, {}, s, algorithm}, t.sets.add_group_set(ranks, 4),
                         [&] { set_done = t.set_engine.now(); });
    t.set_engine.run();
    CHECK(set_done == each_last);
    CHECK(t.set_engine.events_processed() == 1);
    // The rings cross rails between instances, so over spines: the test covers the Clos's images.
    CHECK(same_links(t.each, t.sets, net::LinkKind::ClosUplink) > 0);
    // The groups 2 and 4 UltraServers on were not routed: only their images.
    CHECK(t.set_fabric->router.cached_routes() < t.each_fabric->router.cached_routes());
  }
}

TEST_CASE("network: pairs across UltraServers cost what one transfer per pair costs, as images whole leaf groups back") {
  // The Clos period of clos_period_cluster() is two UltraServers: a pair from UltraServer u to v
  // is priced as the pair 2 floor(u / 2) UltraServers back. One start_transfer() per pair routes
  // each pair itself. Both must give the same completion and, link by link, the same bytes.
  const auto c = clos_period_cluster();
  const double bytes = 5e6;
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (int u = 0; u < 6; ++u) {
    pairs.emplace_back(128 * u, 128 * (u + 2) + 98);        // chip 0 -> chip 49 two UltraServers on: rail 0 -> 1
    pairs.emplace_back(128 * u + 1, 128 * (u + 2) + 99);    // its twin one core on
    if (u < 4) pairs.emplace_back(128 * u + 36, 128 * (u + 4) + 10);  // rail 2 -> 5, four on
  }
  test::AnalyticTwins t(c);
  CHECK(pair_set_time(t.sets, t.set_engine, pairs, bytes) == last_transfer_time(t.each, t.each_engine, pairs, bytes));
  CHECK(same_links(t.each, t.sets, net::LinkKind::ClosUplink) > 0);
  // The pairs from UltraServers 2 to 5 were not routed: only their images from 0 and 1.
  CHECK(t.set_fabric->router.cached_routes() < t.each_fabric->router.cached_routes());
}

TEST_CASE("network: pairs inside later UltraServers and on later cores cost what one transfer per pair costs") {
  // Three UltraServers like the test above's. The analytic model prices a pair inside
  // UltraServer u as the image of the same pair in UltraServer 0, and a pair c cores into its
  // chips as the pair c cores back; one start_transfer() per pair routes each pair itself. Both
  // must give the same completion and, link by link, the same bytes.
  const auto c = ultraserver_cluster(3);
  const double bytes = 3e6;
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (int u = 0; u < 3; ++u) {
    const int at = 128 * u;
    pairs.emplace_back(at + 0, at + 2);    // chip 0 -> chip 1 of instance 0 (a torus neighbour)
    pairs.emplace_back(at + 1, at + 3);    // the same chips, one core on
    pairs.emplace_back(at + 10, at + 42);  // chip 5 of instance 0 -> chip 5 of instance 1 (Z link)
    pairs.emplace_back(at + 4, at + 5);    // inside chip 2: its DMA link alone
  }
  pairs.emplace_back(0, 160);  // across EFA, and its twin one core on
  pairs.emplace_back(1, 161);
  test::AnalyticTwins t(c);
  CHECK(pair_set_time(t.sets, t.set_engine, pairs, bytes) == last_transfer_time(t.each, t.each_engine, pairs, bytes));
  CHECK(t.set_engine.events_processed() == 1);
  // Each pair adds the same bytes to each link of its route, so the sums are equal, not just close.
  const int dma_links = same_links(t.each, t.sets, net::LinkKind::Dma);
  // Every pair inside an UltraServer leaves through its sender's DMA link (4 senders in each of
  // 3); the pairs across EFA do not.
  CHECK(dma_links == 12);
  // UltraServers 1 and 2's chip pairs were not routed: only their images in UltraServer 0.
  CHECK(t.set_fabric->router.cached_routes() < t.each_fabric->router.cached_routes());
}

TEST_CASE("network: pairs in later instances whose links do not translate are routed themselves") {
  // 8 GPUs per instance behind one switch, 2 instances: the units are the instances, but NVLink
  // switch links are no translated kind, so a pair inside instance 1 falls back from its image
  // to its own route. The set must still cost what one transfer per pair costs.
  const auto c = ring_cluster(2);
  const double bytes = 2e6;
  const std::vector<std::pair<std::int32_t, std::int32_t>> pairs{{0, 1}, {8, 9}, {10, 11}, {2, 9}};
  sim::Engine each_engine, set_engine;
  net::Network each(c, NetworkModelKind::Analytic, each_engine);
  net::Network sets(c, NetworkModelKind::Analytic, set_engine);
  CHECK(pair_set_time(sets, set_engine, pairs, bytes) == last_transfer_time(each, each_engine, pairs, bytes));
  // Both instances' switch links carry bytes: instance 1's pairs took their own routes.
  const int nvlinks = same_links(each, sets, net::LinkKind::NvLink);
  CHECK(nvlinks == 6);  // 3 pairs inside an instance, an up- and a downlink each; 2 -> 9 leaves by EFA
  // A rank outside the cluster is refused when the set is registered.
  CHECK_THROWS_AS(sets.add_pair_set(std::vector<std::pair<std::int32_t, std::int32_t>>{{0, 16}}), InputError);
}

TEST_CASE("network: the analytic model's expected time of a collective is its closed form, to the picosecond") {
  // expected() answers from the replica-set pricing (its plan of the group on the fabric, a
  // shape's time per size); estimate() schedules and prices the collective afresh. The cluster
  // of the tests above: a torus row, a Z ring, a group across EFA, at two sizes, with the policy's
  // choice and with each algorithm that runs them.
  // Then groups across UltraServers whose times come from their images whole Clos periods back.
  const auto compare = [](const hw::ClusterSpec& c, const std::vector<std::vector<int>>& groups) {
    sim::Engine engine;
    net::Network analytic(c, NetworkModelKind::Analytic, engine);
    int compared = 0;
    for (const auto& g : groups) {
      for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
        for (const Algorithm a : {Algorithm::Auto, Algorithm::Ring, Algorithm::Hierarchical, Algorithm::HalvingDoubling}) {
          for (const double bytes : {1e5, 3e7}) {
            const net::Collective call{op, g, bytes, a};
            if (a != Algorithm::Auto && !net::supports(a, call, c, analytic.topology().devices())) continue;
            INFO("group of " << g.size() << " from rank " << g.front() << ", op " << static_cast<int>(op)
                             << ", algorithm " << static_cast<int>(a) << ", " << bytes << " bytes");
            CHECK(analytic.expected(call) == analytic.estimate(call));
            ++compared;
          }
        }
      }
    }
    return compared;
  };
  // The row in UltraServer 0 first: the later row's time then comes from the shape the first
  // planned, as in a sweep whose plans share a fabric.
  CHECK(compare(ultraserver_cluster(), {test::iota(8, 0), test::iota(8, 128), {10, 42, 74, 106}, {0, 128, 32, 160}}) >= 30);
  CHECK(compare(clos_period_cluster(), {across(0, 2), across(4, 6), across(3, 5), across(5, 7), across(4, 6, 1)}) >= 30);
}

TEST_CASE("network: calls set aside leave the link figures of the other calls alone") {
  // On one network: a group set call, a pair set call and a plain start(), each once set aside
  // and once not, and a transfer set aside. link_usage(true) must be what a second network
  // given only the calls not set aside reports, link for link; link_usage() all of them.
  const auto c = ring_cluster(2);
  const std::vector<std::int32_t> ranks{0, 1, 2, 3, 4, 5, 8, 9};
  const std::vector<std::pair<std::int32_t, std::int32_t>> pairs{{0, 1}, {2, 9}};
  const net::Collective call{CollectiveOp::AllReduce, {}, 1e6, Algorithm::Ring};
  const net::Collective plain{CollectiveOp::AllReduce, {0, 4, 8, 12}, 3e6, Algorithm::Ring};
  auto calls = [&](net::Network& net, bool with_aside) {
    const net::ReplicaSetId groups = net.add_group_set(ranks, 4);
    const net::ReplicaSetId pair_set = net.add_pair_set(pairs);
    net.start_group_set(call, groups, [] {});
    net.start_pair_set(pair_set, 2e6, [] {});
    net.start(plain, [] {});  // its links also carry the same call set aside below
    if (!with_aside) return;
    REQUIRE(net.set_aside(true));
    net.start_group_set(call, groups, [] {});
    net.start_pair_set(pair_set, 2e6, [] {});
    net.start(plain, [] {});
    net.start_transfer(3, 11, 5e6, [] {});
    REQUIRE(net.set_aside(false));
  };
  sim::Engine e1, e2, e3;
  net::Network both(c, NetworkModelKind::Analytic, e1), others(c, NetworkModelKind::Analytic, e2);
  calls(both, true);
  calls(others, false);
  e1.run();
  e2.run();
  const auto without = both.link_usage(true);
  const auto alone = others.link_usage();
  REQUIRE(without.size() == alone.size());
  for (std::size_t i = 0; i < alone.size(); ++i) {
    CHECK(without[i].id == alone[i].id);
    CHECK(without[i].bytes == Approx(alone[i].bytes).epsilon(1e-12));
    CHECK(without[i].busy_s == Approx(alone[i].busy_s).epsilon(1e-12));
  }
  // All the calls: every call not set aside twice (each link's bytes doubled), plus the transfer
  // set aside on links of its own (3 -> 11 crosses EFA).
  const auto all = both.link_usage();
  CHECK(all.size() > alone.size());
  std::size_t at = 0;
  for (const auto& u : all) {
    if (at < alone.size() && alone[at].id == u.id) CHECK(u.bytes >= 2 * alone[at++].bytes * (1 - 1e-12));
  }
  CHECK(at == alone.size());
  // A model that cannot set calls aside says so, and has no figures without them.
  net::Network flow(c, NetworkModelKind::Flow, e3);
  CHECK_FALSE(flow.set_aside(true));
  CHECK_THROWS_AS(flow.link_usage(true), InternalError);
}
