#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "../net/test_clusters.hpp"
#include "trnsim/error.hpp"
#include "trnsim/report/analysis/link_utilisation.hpp"

using namespace trnsim;
using net::LinkKind;

namespace {
// Two instances of a 4 x 4 torus, two ranks per chip, over EFA: rank r's DMA link is link r, a
// loop on chip r / 2; chip c's EFA port goes up to its rail's leaf (leaf0 for chip 0).
const net::Topology& topology() {
  static const net::Topology t(test::torus_cluster(4, 4, 2, 2));
  return t;
}
}  // namespace

TEST_CASE("link utilisation: busy fraction per link and per kind, busiest first") {
  const net::Topology& t = topology();
  const net::LinkId n01 = t.find_link(0, 1), n12 = t.find_link(1, 2);
  const net::LinkId efa0 = t.efa_port_up(0), efa1 = t.efa_port_up(1);
  REQUIRE(t.link(n01).kind == LinkKind::NeuronLink);
  REQUIRE(t.link(efa0).kind == LinkKind::EfaPort);
  // Step time 2 s:
  //   chip0 -> chip1 NeuronLink busy 1.0 s, 10 GB -> 50 %;  chip1 -> chip2 busy 0.5 s, 5 GB -> 25 %
  //   chip0's EFA port busy 1.5 s, 3 GB -> 75 %;           chip1's EFA port idle (no bytes) -> left out
  const std::vector<net::LinkUsage> links = {
      {n01, LinkKind::NeuronLink, 10e9, 1.0},
      {n12, LinkKind::NeuronLink, 5e9, 0.5},
      {efa0, LinkKind::EfaPort, 3e9, 1.5},
      {efa1, LinkKind::EfaPort, 0, 0},
  };
  const auto u = report::link_utilisation(links, &t, 2.0, 2);
  REQUIRE(u.kinds.size() == 2);
  CHECK(u.kinds[0].kind == LinkKind::NeuronLink);  // LinkKind order
  CHECK(u.kinds[0].links == 2);
  CHECK(u.kinds[0].bytes == Approx(15e9));
  CHECK(u.kinds[0].mean_busy_fraction == Approx(0.375));  // (50 + 25) / 2 %
  CHECK(u.kinds[0].max_busy_fraction == Approx(0.5));
  CHECK(u.kinds[1].kind == LinkKind::EfaPort);
  CHECK(u.kinds[1].links == 1);
  CHECK(u.kinds[1].max_busy_fraction == Approx(0.75));
  REQUIRE(u.top.size() == 2);  // top_n
  CHECK(u.top[0].id == efa0);
  CHECK(u.top[0].busy_fraction == Approx(0.75));
  CHECK(u.top[1].id == n01);
  // Named by their end vertices (kind and index), with the topology's bandwidth.
  CHECK(u.top[0].src == "chip0");
  CHECK(u.top[0].dst == "leaf0");
  CHECK(u.top[1].dst == "chip1");
  CHECK(u.top[0].bandwidth == t.link(efa0).bandwidth);
  // Without the topology the busiest links cannot be named: refused, not left nameless.
  CHECK_THROWS_AS(report::link_utilisation(links, nullptr, 2.0, 2), InternalError);
}

TEST_CASE("link utilisation: a DMA link is named by its chip and the rank it serves") {
  // Link 5 is rank 5's DMA link, a loop on chip 2 (two ranks per chip).
  const std::vector<net::LinkUsage> links = {{5, LinkKind::Dma, 1e9, 0.1}};
  const auto u = report::link_utilisation(links, &topology(), 1.0, 1);
  REQUIRE(u.top.size() == 1);
  CHECK(u.top[0].src == "chip2");
  CHECK(u.top[0].dst == "rank 5");
}

TEST_CASE("link utilisation: the busiest links are those a full sort puts first, ties by link id") {
  // 60 DMA links (ids 0-59) with busy times 7 (i mod 13) ms, so many ties: a full sort by busy time
  // descending, then id, written out here, must give the report's top 10 in order.
  std::vector<net::LinkUsage> links;
  for (int i = 59; i >= 0; --i) links.push_back({i, LinkKind::Dma, 1e6, 0.007 * (i % 13)});
  std::vector<net::LinkUsage> sorted = links;
  std::sort(sorted.begin(), sorted.end(), [](const net::LinkUsage& a, const net::LinkUsage& b) {
    return a.busy_s != b.busy_s ? a.busy_s > b.busy_s : a.id < b.id;
  });
  const auto u = report::link_utilisation(links, &topology(), 1.0, 10);
  REQUIRE(u.top.size() == 10);
  for (std::size_t i = 0; i < 10; ++i) CHECK(u.top[i].id == sorted[i].id);
  CHECK(u.top[0].id == 12);  // 12 mod 13 = 12, the largest; then 25, 38, 51; then 11, 24, ...
  CHECK(u.top[4].id == 11);
}
