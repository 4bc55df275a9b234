// Replica sets against one call per group (or pair), on random groups shifted by whole units and
// cores, over every kind of cluster the translations treat differently: UltraServers whose leaf
// groups are not whole UltraServers (a Clos period of several) or are (a period of one), a
// partial last leaf group, GPUs behind NVSwitches, trn3-like switches with inter-rack rings,
// tori without UltraServers, single-chip instances. The invariant: the set's completion is the
// last group's to the picosecond, and every link carries the same bytes, exactly (a set adds each
// group's bytes link by link in group order, as one call per group does). A case the algorithm
// cannot run (make_schedule's InputError) is skipped, and counted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "test_clusters.hpp"
#include "test_runs.hpp"
#include "trnsim/error.hpp"
#include "trnsim/hw/device_map.hpp"
#include "trnsim/net/network.hpp"

using namespace trnsim;
using net::Algorithm;
using net::CollectiveOp;
using net::NetworkModelKind;

namespace {

// The same links in both networks, each with the same bytes.
bool same_links(const test::AnalyticTwins& t) {
  const auto x = t.each.link_usage(), y = t.sets.link_usage();
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i].id != y[i].id || x[i].bytes != y[i].bytes) return false;
  }
  return true;
}

int uniform(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

struct Tally {
  int compared = 0, skipped = 0;
};

// `groups` of the same size under `op` and `a`: the set against one call per group.
void compare_groups(const hw::ClusterSpec& c, const std::vector<std::vector<int>>& groups, CollectiveOp op,
                    Algorithm a, double bytes, Tally& tally) {
  std::vector<std::int32_t> flat;
  for (const auto& g : groups) flat.insert(flat.end(), g.begin(), g.end());
  try {
    test::AnalyticTwins t(c);
    sim::Time last, done;
    for (const auto& g : groups) {
      t.each.start(net::Collective{op, g, bytes, a}, [&] { last = std::max(last, t.each_engine.now()); });
    }
    t.each_engine.run();
    t.sets.start_group_set(net::Collective{op, {}, bytes, a}, t.sets.add_group_set(flat, static_cast<int>(groups[0].size())),
                           [&] { done = t.set_engine.now(); });
    t.set_engine.run();
    INFO(groups.size() << " groups of " << groups[0].size() << " from rank " << groups[0][0] << ", op "
                       << static_cast<int>(op) << ", algorithm " << static_cast<int>(a));
    CHECK(done == last);
    CHECK(same_links(t));
    ++tally.compared;
  } catch (const InputError&) {
    ++tally.skipped;  // the algorithm cannot run these groups
  }
}

// Random groups on `c`: a base group of 2-8 ranks within a few units, copies of it moved by whole
// units and a core (each rank stays in its chip), or groups a stride apart (data-parallel-like).
void random_groups(const hw::ClusterSpec& c, std::mt19937& rng, int cases, Tally& tally) {
  const hw::DeviceMap dm(c);
  const int ranks = dm.ranks(), per_chip = dm.ranks_per_chip();
  const int per_unit = dm.ranks_per_instance() * dm.instances_per_ultraserver();
  const int units = ranks / per_unit;
  constexpr CollectiveOp kOps[] = {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                                   CollectiveOp::AllToAll};
  constexpr Algorithm kAlgorithms[] = {Algorithm::Ring,         Algorithm::Auto,   Algorithm::Optimal,
                                       Algorithm::Hierarchical, Algorithm::HalvingDoubling, Algorithm::Direct,
                                       Algorithm::BidirectionalRing, Algorithm::HierarchicalMesh};
  for (int n = 0; n < cases; ++n) {
    const int span = uniform(rng, 1, std::min(4, units));
    const int size = uniform(rng, 2, std::min(8, span * per_unit));
    std::vector<std::vector<int>> groups;
    if (uniform(rng, 0, 2) == 0) {
      const int stride = uniform(rng, 1, std::max(1, ranks / size));
      const int last_first = ranks - 1 - stride * (size - 1);
      for (int g = uniform(rng, 1, 8); g > 0 && last_first >= 0; --g) {
        const int first = uniform(rng, 0, last_first);
        std::vector<int> group;
        for (int i = 0; i < size; ++i) group.push_back(first + i * stride);
        groups.push_back(group);
      }
    } else {
      std::set<int> picked;
      while (static_cast<int>(picked.size()) < size) picked.insert(uniform(rng, 0, span * per_unit - 1));
      std::vector<int> base(picked.begin(), picked.end());
      std::shuffle(base.begin(), base.end(), rng);
      const int top = *std::max_element(base.begin(), base.end());
      for (int g = uniform(rng, 2, 8); g > 0; --g) {
        const int moved = uniform(rng, 0, (ranks - 1 - top) / per_unit) * per_unit;
        const int core = uniform(rng, 0, per_chip - 1);
        std::vector<int> group;
        for (const int r : base) group.push_back((r + moved) / per_chip * per_chip + ((r + moved) % per_chip + core) % per_chip);
        if (std::set<int>(group.begin(), group.end()).size() == group.size()) groups.push_back(group);
      }
    }
    if (groups.empty()) continue;
    const double bytes = std::uniform_real_distribution<double>(1e4, 5e7)(rng);
    compare_groups(c, groups, kOps[uniform(rng, 0, 3)], kAlgorithms[uniform(rng, 0, 6)], bytes, tally);
  }
}

// Random pair sets on `c`: one pair moved by whole units (either way) and by a core.
void random_pairs(const hw::ClusterSpec& c, std::mt19937& rng, int cases, Tally& tally) {
  const hw::DeviceMap dm(c);
  const int ranks = dm.ranks();
  const int per_unit = dm.ranks_per_instance() * dm.instances_per_ultraserver();
  for (int n = 0; n < cases; ++n) {
    const int a = uniform(rng, 0, ranks - 1), b = uniform(rng, 0, ranks - 1);
    std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
    for (int i = uniform(rng, 1, 12); i > 0 && a != b; --i) {
      const int moved = uniform(rng, -(ranks / per_unit), ranks / per_unit) * per_unit + uniform(rng, 0, 1);
      const int x = a + moved, y = b + moved;
      if (x >= 0 && y >= 0 && x < ranks && y < ranks && x != y) pairs.emplace_back(x, y);
    }
    if (pairs.empty()) continue;
    test::AnalyticTwins t(c);
    sim::Time last, done;
    for (const auto& [x, y] : pairs) t.each.start_transfer(x, y, 3e6, [&] { last = std::max(last, t.each_engine.now()); });
    t.each_engine.run();
    t.sets.start_pair_set(t.sets.add_pair_set(pairs), 3e6, [&] { done = t.set_engine.now(); });
    t.set_engine.run();
    INFO(pairs.size() << " pairs from " << pairs[0].first << " -> " << pairs[0].second);
    CHECK(done == last);
    CHECK(same_links(t));
    ++tally.compared;
  }
}

}  // namespace

TEST_CASE("network: random group and pair sets cost what one call per group or pair costs, on every kind of cluster") {
  std::vector<std::pair<const char*, hw::ClusterSpec>> clusters;
  auto add = [&](const char* name, hw::ClusterSpec c, int spines, int leaf_radix) {
    c.fabric.spines = spines;
    c.fabric.leaf_radix = leaf_radix;
    clusters.emplace_back(name, c);
  };
  add("UltraServers, leaves of 6 instances (a Clos period of 3 UltraServers), 8 UltraServers",
      test::ultraserver_cluster(4, 4, 2, 32, 4), 4, 6);
  add("UltraServers, leaves of 8 instances, a partial last leaf group", test::ultraserver_cluster(4, 4, 2, 28, 4), 3, 8);
  add("UltraServers, leaves of 2 instances (a period of one UltraServer)", test::ultraserver_cluster(4, 4, 2, 24, 4), 4, 2);
  add("GPUs behind NVSwitches, leaves of 4 nodes", test::gpu_cluster(8, 10), 4, 4);
  add("trn3-like switches, leaves of 2", test::switched_cluster(9), 4, 2);
  auto paired = test::switched_cluster(12);
  paired.instance.ultraserver_instances = 2;
  add("trn3-like switches in UltraServers of 2, leaves of 3", paired, 4, 3);
  add("2x2 tori without UltraServers, leaves of 3", test::torus_cluster(2, 2, 2, 11), 5, 3);
  add("single-chip instances, leaves of 2", test::torus_cluster(1, 1, 2, 9), 3, 2);
  std::mt19937 rng(20261202);
  for (const auto& [name, c] : clusters) {
    INFO(name);
    Tally groups, pairs;
    random_groups(c, rng, 30, groups);
    random_pairs(c, rng, 15, pairs);
    // Enough cases ran for the comparison to mean something (most algorithms run most groups).
    CHECK(groups.compared >= 10);
    CHECK(pairs.compared >= 8);
  }
}
