#include <catch2/catch.hpp>

#include <vector>

#include "trnsim/report/analysis/link_utilisation.hpp"

using namespace trnsim;
using net::LinkKind;

namespace {
net::Vertex chip(int i) { return {net::VertexKind::Chip, i}; }
const net::Vertex leaf0{net::VertexKind::Leaf, 0};
}  // namespace

TEST_CASE("link utilisation: busy fraction per link and per kind, busiest first") {
  // Step time 2 s. Links (bandwidth 10 GB/s):
  //   0 NeuronLink busy 1.0 s, 10 GB -> 50 %;  1 NeuronLink busy 0.5 s, 5 GB -> 25 %
  //   2 EFA busy 1.5 s, 3 GB -> 75 %;          3 EFA idle (no bytes) -> left out
  const std::vector<net::LinkUsage> links = {
      {0, LinkKind::NeuronLink, chip(0), chip(1), 10e9, 10e9, 1.0},
      {1, LinkKind::NeuronLink, chip(1), chip(2), 10e9, 5e9, 0.5},
      {2, LinkKind::EfaPort, chip(0), leaf0, 10e9, 3e9, 1.5},
      {3, LinkKind::EfaPort, chip(1), leaf0, 10e9, 0, 0},
  };
  const auto u = report::link_utilisation(links, 2.0, 2);
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
  CHECK(u.top[0].id == 2);
  CHECK(u.top[0].busy_fraction == Approx(0.75));
  CHECK(u.top[1].id == 0);
  // Named by their end vertices: kind and index.
  CHECK(u.top[0].src == "chip0");
  CHECK(u.top[0].dst == "leaf0");
  CHECK(u.top[1].dst == "chip1");
}

TEST_CASE("link utilisation: a DMA link is named by its chip and the rank it serves") {
  // Link 5 is rank 5's DMA link, a loop on chip 2 (two ranks per chip).
  const std::vector<net::LinkUsage> links = {{5, LinkKind::Dma, chip(2), chip(2), 10e9, 1e9, 0.1}};
  const auto u = report::link_utilisation(links, 1.0, 1);
  REQUIRE(u.top.size() == 1);
  CHECK(u.top[0].src == "chip2");
  CHECK(u.top[0].dst == "rank 5");
}
