// The router's breadth-first routes against routes walked by hand from the documented policies
// (include/trnsim/net/router.hpp), for every pair of small clusters.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "test_clusters.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/net/topology.hpp"

using namespace trnsim;

namespace {
// Steps from a to b on a ring of n, the shorter way; a tie goes the positive way.
int ring_step(int a, int b, int n) {
  const int forward = ((b - a) % n + n) % n;
  return forward <= n - forward ? forward : forward - n;
}
// Appends the chips met walking `steps` along one ring; `at(k)` is the chip at ring position k.
template <class At>
void walk(int& k, int steps, int n, std::vector<int>& path, At at) {
  for (; steps != 0; steps += steps > 0 ? -1 : 1) {
    k = (k + (steps > 0 ? 1 : n - 1)) % n;
    path.push_back(at(k));
  }
}
// Dimension order on a trn-style torus: X in the source's row, Y in the destination's column,
// then Z (instances of an UltraServer) at the destination's coordinates.
std::vector<int> torus_path(const hw::ClusterSpec& c, int src, int dst) {
  const int nx = c.instance.torus_x, ny = c.instance.torus_y, cpi = c.instance.chips;
  const int z = std::max(1, c.instance.ultraserver_instances);
  const int si = src / cpi, di = dst / cpi, us = si / z;
  int x = (src % cpi) % nx, y = (src % cpi) / nx, k = si % z;
  std::vector<int> path{src};
  walk(x, ring_step(x, (dst % cpi) % nx, nx), nx, path, [&](int v) { return si * cpi + y * nx + v; });
  walk(y, ring_step(y, (dst % cpi) / nx, ny), ny, path, [&](int v) { return si * cpi + v * nx + x; });
  walk(k, ring_step(k, di % z, z), z, path, [&](int v) { return (us * z + v) * cpi + y * nx + x; });
  return path;
}
// splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014; the
// finaliser as in Vigna's reference code), written out here independently of the router.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Up-down on the rail-optimised Clos: the source's leaf, and unless the destination is on it, the
// spine h mod spines and the destination's leaf, with h (router.hpp) splitmix64 of
// splitmix64(source instance mod leaf_radix << 32 | instance offset as 32 bits) xor
// (source rail << 32 | destination rail).
std::vector<int> clos_path(const net::Topology& t, int src, int dst) {
  const int cpi = t.devices().chips_per_instance();
  const int up = t.leaf(src % cpi, src / cpi), down = t.leaf(dst % cpi, dst / cpi);
  if (up == down) return {src, up, dst};
  const int si = src / cpi, di = dst / cpi;
  const int radix = t.cluster().fabric.leaf_radix;
  const std::uint64_t instances = (std::uint64_t(si % radix) << 32) | std::uint32_t(di - si);
  const std::uint64_t rails = (std::uint64_t(src % cpi) << 32) | std::uint32_t(dst % cpi);
  const std::uint64_t h = splitmix64(splitmix64(instances) ^ rails);
  const int spine = t.spine(static_cast<int>(h % std::uint64_t(t.spine_count())));
  return {src, up, spine, down, dst};
}
std::vector<net::LinkId> links_of(const net::Topology& t, const std::vector<int>& path) {
  std::vector<net::LinkId> links;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) links.push_back(t.find_link(path[i], path[i + 1]));
  return links;
}
std::vector<net::LinkId> routed(net::Router& r, int src, int dst) {
  const auto links = r.links(r.route(src, dst));
  return {links.begin(), links.end()};
}
}  // namespace

TEST_CASE("routing: hand-walked torus paths, ties going the positive way") {
  const net::Topology t(test::torus_cluster(4, 4, 1, 1));
  net::Router r(t);
  // (0,0) -> (2,2): both dimensions tie at 2 steps; positive both times: 0, 1, 2, then up column 2.
  CHECK(routed(r, 0, 10) == links_of(t, {0, 1, 2, 6, 10}));
  // (0,0) -> (3,3): one step back over each wrap.
  CHECK(routed(r, 0, 15) == links_of(t, {0, 3, 15}));
  // (3,1) -> (1,0): X ties (3 -> 0 -> 1 positive, over the wrap), then Y one step back.
  CHECK(routed(r, 7, 1) == links_of(t, {7, 4, 5, 1}));
}

TEST_CASE("routing: torus routes are the dimension-order walk for every pair") {
  SECTION("4x4 torus, UltraServers of 4 instances with a Z ring, two UltraServers") {
    auto c = test::ultraserver_cluster(4, 4, 1, 8, 4);
    const net::Topology t(c);
    net::Router r(t);
    int compared = 0;
    for (int src = 0; src < 128; ++src) {
      for (int dst = 0; dst < 128; ++dst) {
        if (src == dst) continue;
        INFO(src << " -> " << dst);
        if (src / 64 == dst / 64) {
          CHECK(routed(r, src, dst) == links_of(t, torus_path(c, src, dst)));
          ++compared;
        } else {
          CHECK(routed(r, src, dst) == links_of(t, clos_path(t, src, dst)));  // another UltraServer: EFA
        }
      }
    }
    CHECK(compared == 2 * 64 * 63);
  }
  SECTION("three UltraServers, the later ones' pairs routed first (each found as its image in the first)") {
    auto c = test::ultraserver_cluster(4, 4, 1, 12, 4);
    const net::Topology t(c);
    net::Router r(t);
    int compared = 0;
    for (int src = 191; src >= 64; --src) {
      for (int dst = 191; dst >= 64; --dst) {
        if (src == dst || src / 64 != dst / 64) continue;
        INFO(src << " -> " << dst);
        CHECK(routed(r, src, dst) == links_of(t, torus_path(c, src, dst)));
        ++compared;
      }
    }
    CHECK(compared == 2 * 64 * 63);
    // Each pair of UltraServers 1 and 2 cached, and its image in UltraServer 0, which nothing asked
    // for: the routes were found as images (a search per pair would have cached 2 x 64 x 63).
    CHECK(r.cached_routes() == 3 * 64 * 63);
  }
  SECTION("3x2 torus (odd ring, a dimension of two), two instances without Z") {
    const auto c = test::torus_cluster(3, 2, 1, 2);
    const net::Topology t(c);
    net::Router r(t);
    for (int src = 0; src < 12; ++src) {
      for (int dst = 0; dst < 12; ++dst) {
        if (src == dst) continue;
        INFO(src << " -> " << dst);
        const auto expected = src / 6 == dst / 6 ? torus_path(c, src, dst) : clos_path(t, src, dst);
        CHECK(routed(r, src, dst) == links_of(t, expected));
      }
    }
  }
}

TEST_CASE("routing: Clos and switch routes are the up-down and nearest-switch walks for every pair") {
  SECTION("GPU nodes behind NVSwitches, 4 spines, leaves of 2 nodes") {
    auto c = test::gpu_cluster(8, 4);
    c.fabric.spines = 4;
    c.fabric.leaf_radix = 2;
    const net::Topology t(c);
    net::Router r(t);
    int same_leaf = 0;
    for (int src = 0; src < 32; ++src) {
      for (int dst = 0; dst < 32; ++dst) {
        if (src == dst) continue;
        INFO(src << " -> " << dst);
        std::vector<int> expected;
        if (src / 8 == dst / 8) {
          expected = {src, 32 + src / 8, dst};  // NVSwitch i is vertex 32 + i, wired after the 32 GPUs
          REQUIRE(t.vertex(expected[1]).kind == net::VertexKind::NvSwitch);
        } else {
          expected = clos_path(t, src, dst);
          if (expected.size() == 3) ++same_leaf;
        }
        CHECK(routed(r, src, dst) == links_of(t, expected));
      }
    }
    // Same rail, same leaf: GPU g of nodes {0, 1} and of nodes {2, 3}: 8 rails x 2 leaves x 2 ordered pairs.
    CHECK(same_leaf == 32);
  }
  SECTION("trn3-like: server switch, UltraServer switch, inter-rack link, then EFA") {
    const auto c = test::switched_cluster(3);  // three UltraServers of 16 chips, servers of 4
    const net::Topology t(c);
    net::Router r(t);
    auto vertex_of = [&](net::VertexKind kind, int index) {
      for (net::VertexId v = 0; v < t.vertex_count(); ++v) {
        if (t.vertex(v).kind == kind && t.vertex(v).index == index) return v;
      }
      FAIL("no such vertex");
      return -1;
    };
    for (int src = 0; src < 48; ++src) {
      for (int dst = 0; dst < 48; ++dst) {
        if (src == dst) continue;
        INFO(src << " -> " << dst);
        std::vector<int> expected;
        if (src / 4 == dst / 4) {
          expected = {src, vertex_of(net::VertexKind::ServerSwitch, src / 4), dst};
        } else if (src / 16 == dst / 16) {
          expected = {src, vertex_of(net::VertexKind::RackSwitch, src / 16), dst};
        } else if (src % 16 == dst % 16) {
          expected = {src, dst};  // three UltraServers on a ring: each is a neighbour of the others
        } else {
          expected = clos_path(t, src, dst);
        }
        CHECK(routed(r, src, dst) == links_of(t, expected));
      }
    }
  }
}
