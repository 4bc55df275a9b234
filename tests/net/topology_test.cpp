#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <utility>

#include "test_clusters.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/bisection.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/net/topology.hpp"

using namespace trnsim;
using net::LinkKind;

namespace {
int hops(net::Router& r, int a, int b) { return static_cast<int>(r.route(a, b).hops); }
std::vector<LinkKind> kinds(net::Router& r, int a, int b) {
  std::vector<LinkKind> k;
  for (auto l : r.links(r.route(a, b))) k.push_back(r.topology().link(l).kind);
  return k;
}
std::vector<LinkKind> path_kinds(net::Router& r, int src_rank, int dst_rank) {
  std::vector<LinkKind> k;
  for (auto l : r.links(r.path(src_rank, dst_rank))) k.push_back(r.topology().link(l).kind);
  return k;
}
}  // namespace

TEST_CASE("topology: a 4x4 torus has four NeuronLinks per chip of a quarter of its bandwidth") {
  const net::Topology t(test::torus_cluster(4, 4, 2, 1));
  // 32 DMA links (one per rank: 16 chips x 2 cores) + 16 chips x 4 ports.
  CHECK(t.link_count() == 32 + 64);
  const auto l = t.find_link(0, 1);
  REQUIRE(l >= 0);
  CHECK(t.link(l).kind == LinkKind::NeuronLink);
  CHECK(t.link(l).bandwidth == Approx(100e9));  // 400 GB/s per chip / 4 ports
  CHECK(t.find_link(0, 3) >= 0);                // x wrap
  CHECK(t.find_link(0, 12) >= 0);               // y wrap
  CHECK(t.find_link(0, 5) < 0);                 // no diagonals
}

TEST_CASE("topology: a torus dimension of two merges both ports into one link") {
  const net::Topology t(test::torus_cluster(4, 2, 1, 1));
  // 4 ports of 100 GB/s: the two y ports of chip 0 both reach chip 4.
  CHECK(t.link(t.find_link(0, 4)).bandwidth == Approx(200e9));
  CHECK(t.link(t.find_link(0, 1)).bandwidth == Approx(100e9));
}

TEST_CASE("routing: torus routes are dimension-ordered with the shorter wrap") {
  const net::Topology t(test::torus_cluster(4, 4, 1, 1));
  net::Router r(t);
  CHECK(hops(r, 0, 0) == 0);   // no link between a chip and itself
  CHECK(hops(r, 0, 1) == 1);
  CHECK(hops(r, 0, 3) == 1);   // (0,0) -> (3,0): one step backwards over the wrap
  CHECK(hops(r, 0, 5) == 2);   // (0,0) -> (1,1)
  CHECK(hops(r, 0, 10) == 4);  // (0,0) -> (2,2): 2 + 2, the farthest chip
  CHECK(hops(r, 0, 15) == 2);  // (0,0) -> (3,3): both wraps
  // X first: 0 -> 5 goes through chip 1, not chip 4.
  const auto links = r.links(r.route(0, 5));
  CHECK(t.link(links[0]).dst == 1);
  CHECK(r.route(0, 5).latency == Approx(2e-6));
  CHECK(r.cached_routes() == 6);
}

TEST_CASE("routing: a transfer's path starts with the sender's DMA link where DMA engines move it") {
  // 4x4 torus of 2-core Trainium chips: ranks 2c and 2c+1 on chip c; DMA links are links 0..31.
  auto c = test::torus_cluster(4, 4, 2, 2);
  const net::Topology t(c);
  net::Router r(t);
  // Core to core on one chip: the sender's DMA link alone; a reduction's read: the same.
  CHECK(path_kinds(r, 0, 1) == std::vector{LinkKind::Dma});
  CHECK(r.links(r.path(1, 0))[0] == t.dma_link(1));
  CHECK(path_kinds(r, 5, 5) == std::vector{LinkKind::Dma});
  // Over NeuronLink: the sender's DMA link, then the chip route (rank 3 is on chip 1).
  CHECK(path_kinds(r, 1, 3) == std::vector{LinkKind::Dma, LinkKind::NeuronLink});
  CHECK(r.links(r.path(1, 3))[0] == t.dma_link(1));
  CHECK(r.path(1, 3).latency == Approx(1e-6));
  // Over EFA (rank 32 is on chip 16, the next instance): no DMA link, the NIC reads device memory.
  CHECK(path_kinds(r, 0, 32) == std::vector{LinkKind::EfaPort, LinkKind::EfaPort});
  // A GPU sends from its SMs: its NVLink path has no DMA link; its reduction read has its copy path.
  const net::Topology g(test::gpu_cluster(8, 1));
  net::Router gr(g);
  CHECK(path_kinds(gr, 0, 1) == std::vector{LinkKind::NvLink, LinkKind::NvLink});
  CHECK(path_kinds(gr, 3, 3) == std::vector{LinkKind::Dma});
}

TEST_CASE("topology: each rank's DMA link carries its share of the chip's collective DMA throughput") {
  auto c = test::torus_cluster(4, 4, 2, 1);
  c.instance.chip.dma_bandwidth = 1000e9;
  c.instance.calibration.collective_dma_share = 0.25;
  const net::Topology t(c);
  // 0.25 x 1,000 GB/s per chip over its 2 ranks, whatever the HBM bandwidth.
  for (int rank = 0; rank < 32; ++rank) {
    CHECK(t.link(t.dma_link(rank)).kind == LinkKind::Dma);
    CHECK(t.link(t.dma_link(rank)).bandwidth == Approx(125e9));
    CHECK(t.link(t.dma_link(rank)).src == rank / 2);
  }
  // Without a DMA figure, copies go through HBM: half the test chip's 800 GB/s, over 2 ranks.
  const net::Topology h(test::torus_cluster(4, 4, 2, 1));
  CHECK(h.link(h.dma_link(0)).bandwidth == Approx(200e9));
  // A GPU is one rank: half its 2,000 GB/s.
  const net::Topology g(test::gpu_cluster(8, 1));
  CHECK(g.link(g.dma_link(7)).bandwidth == Approx(1000e9));
}

TEST_CASE("routing: UltraServer Z ring joins chips at the same coordinates") {
  auto c = test::ultraserver_cluster(4, 4, 1, 4, 4);
  const net::Topology t(c);
  net::Router r(t);
  CHECK(kinds(r, 0, 16) == std::vector{LinkKind::UltraServerZ});
  CHECK(hops(r, 0, 32) == 2);  // two instances away
  CHECK(hops(r, 0, 48) == 1);  // instance 3 is one step backwards on the ring
  CHECK(t.link(t.find_link(0, 16)).bandwidth == Approx(128e9));
  CHECK(hops(r, 0, 16 + 5) == 3);  // X, Y, then Z
}

TEST_CASE("routing: Clos routes go up then down, deterministically") {
  auto c = test::gpu_cluster(8, 4);
  c.fabric.spines = 4;
  const net::Topology t(c);
  net::Router r(t);
  // Same rail (GPU 0 of nodes 0 and 2): through the rail's leaf only.
  CHECK(kinds(r, 0, 16) == std::vector{LinkKind::EfaPort, LinkKind::EfaPort});
  CHECK(r.route(0, 16).latency == Approx(10e-6 + 1e-6));
  // Different rails: up to a spine and down.
  const auto up_down = std::vector{LinkKind::EfaPort, LinkKind::ClosUplink, LinkKind::ClosDownlink, LinkKind::EfaPort};
  for (int dst = 9; dst < 32; dst += 3) {
    if (dst % 8 == 0) continue;
    CHECK(kinds(r, 0, dst) == up_down);
  }
  // Inside a node: through the NVSwitch.
  CHECK(kinds(r, 0, 5) == std::vector{LinkKind::NvLink, LinkKind::NvLink});
  // A second router on the same topology picks the same spines.
  net::Router again(t);
  for (int dst = 9; dst < 32; ++dst) {
    const auto a = r.links(r.route(1, dst));
    const auto b = again.links(again.route(1, dst));
    CHECK(std::vector(a.begin(), a.end()) == std::vector(b.begin(), b.end()));
  }
}

TEST_CASE("routing: the Clos spreads pairs over its spines") {
  auto c = test::gpu_cluster(8, 8);
  c.fabric.spines = 4;
  const net::Topology t(c);
  net::Router r(t);
  std::vector<int> used(4, 0);
  for (int dst = 8; dst < 64; ++dst) {
    if (dst % 8 == 0) continue;
    const auto links = r.links(r.route(0, dst));
    ++used[static_cast<std::size_t>(t.vertex(t.link(links[1]).dst).index)];
  }
  for (int u : used) CHECK(u > 0);
}

TEST_CASE("routing: trn3-style switches route through the nearest switch") {
  const net::Topology t(test::switched_cluster(2));
  net::Router r(t);
  CHECK(kinds(r, 0, 3) == std::vector{LinkKind::ServerSwitch, LinkKind::ServerSwitch});
  CHECK(kinds(r, 0, 4) == std::vector{LinkKind::RackSwitch, LinkKind::RackSwitch});
  CHECK(kinds(r, 0, 16) == std::vector{LinkKind::InterRack});
  CHECK(hops(r, 0, 17) == 4);  // another UltraServer, another position: EFA Clos
}

TEST_CASE("topology: bad wiring is an input error") {
  auto c = test::torus_cluster(4, 4, 1, 1);
  c.instance.torus_x = 3;
  CHECK_THROWS_AS(net::Topology(c), InputError);
  auto single = test::torus_cluster(1, 1, 2, 2);
  single.instance.efa.bandwidth = 0;  // two instances, nothing between them
  const net::Topology t(single);
  net::Router r(t);
  CHECK_THROWS_AS(r.route(0, 1), InputError);
}

TEST_CASE("topology: DOT output names every vertex and inter-chip link") {
  const net::Topology t(test::torus_cluster(2, 2, 1, 1));
  std::ostringstream os;
  t.write_dot(os);
  const std::string dot = os.str();
  CHECK(dot.find("digraph") == 0);
  CHECK(dot.find("[label=\"chip3\", shape=box]") != std::string::npos);
  // Both x ports of a 2-wide torus reach the same neighbour: one link of 2 x 100 GB/s.
  CHECK(dot.find("[label=\"neuronlink 200 GB/s\"]") != std::string::npos);
  std::size_t arrows = 0;
  for (std::size_t p = dot.find("->"); p != std::string::npos; p = dot.find("->", p + 1)) ++arrows;
  CHECK(arrows == static_cast<std::size_t>(t.link_count() - 4));  // minus the 4 DMA loops
}

TEST_CASE("topology: bisection bandwidth of a 4x4 torus cuts 8 links each way") {
  // Halves y < 2 and y >= 2: 4 columns x 2 y-links (y 1 -> 2 and the wrap y 3 -> 0) from the first
  // half to the second, 100 GB/s each.
  const net::Topology t(test::torus_cluster(4, 4, 1, 1));
  CHECK(net::bisection_bandwidth(t) == Approx(8 * 100e9));
  // Two GPU nodes: the 8 EFA ports of node 0 at 25 GB/s bound it.
  CHECK(net::bisection_bandwidth(net::Topology(test::gpu_cluster(8, 2))) == Approx(8 * 25e9));
}

TEST_CASE("topology: two vertices are joined by one link each way, rings of two merged") {
  // The builder keeps no index of pairs: it merges a link into the one wired just before it
  // between the same vertices (the two ports of a ring of two). Every wiring must therefore give
  // each pair at most one link, found by find_link.
  auto ultra = test::ultraserver_cluster(4, 2, 2, 4, 2);  // y rings of two; Z rings of two
  ultra.fabric.spines = 3;
  ultra.fabric.leaf_radix = 1;  // a leaf per instance and rail: routes cross the spines
  auto gpus = test::gpu_cluster(8, 4);
  gpus.fabric.spines = 4;
  gpus.fabric.leaf_radix = 2;
  for (const hw::ClusterSpec& c : {ultra, test::torus_cluster(2, 2, 1, 2), test::switched_cluster(2),
                                   test::switched_cluster(3), gpus}) {
    const net::Topology t(c);
    std::set<std::pair<net::VertexId, net::VertexId>> pairs;
    for (net::LinkId l = 0; l < t.link_count(); ++l) {
      const net::Link& link = t.link(l);
      if (link.kind == LinkKind::Dma) continue;
      CHECK(pairs.emplace(link.src, link.dst).second);
      CHECK(t.find_link(link.src, link.dst) == l);
    }
  }
  // A Z ring of two: chip 0's two Z ports (128 GB/s each) are one link to chip 8, of 256 GB/s.
  const net::Topology t(ultra);
  REQUIRE(t.find_link(0, 8) >= 0);
  CHECK(t.link(t.find_link(0, 8)).kind == LinkKind::UltraServerZ);
  CHECK(t.link(t.find_link(0, 8)).bandwidth == Approx(256e9));
  // trn3 with two UltraServers: the inter-rack ring of two, 2 x 64 GB/s.
  const net::Topology s(test::switched_cluster(2));
  CHECK(s.link(s.find_link(0, 16)).bandwidth == Approx(128e9));
}

TEST_CASE("topology: the Clos tables name the links between each chip, leaf and spine") {
  auto c = test::torus_cluster(4, 2, 2, 4);
  c.fabric.spines = 3;
  c.fabric.leaf_radix = 2;  // two instances per leaf
  const net::Topology t(c);
  for (int chip = 0; chip < 32; ++chip) {
    // Chip 8i + r hangs off rail r's leaf of instance i.
    const net::VertexId leaf = t.leaf(chip % 8, chip / 8);
    CHECK(t.efa_port_up(chip) == t.find_link(chip, leaf));
    CHECK(t.efa_port_down(chip) == t.find_link(leaf, chip));
    CHECK(t.link(t.efa_port_up(chip)).kind == LinkKind::EfaPort);
  }
  for (int rail = 0; rail < 8; ++rail) {
    for (int instance = 0; instance < 4; instance += 2) {
      const net::VertexId leaf = t.leaf(rail, instance);
      for (int k = 0; k < 3; ++k) {
        CHECK(t.clos_uplink(leaf, k) == t.find_link(leaf, t.spine(k)));
        CHECK(t.clos_downlink(k, leaf) == t.find_link(t.spine(k), leaf));
        CHECK(t.link(t.clos_uplink(leaf, k)).kind == LinkKind::ClosUplink);
      }
    }
  }
  // No Clos in one instance.
  const net::Topology one(test::torus_cluster(4, 2, 2, 1));
  CHECK(one.efa_port_up(0) == -1);
  CHECK(one.clos_uplink(0, 0) == -1);
}
