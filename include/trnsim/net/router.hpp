#pragma once
// Routes between chips: breadth-first shortest paths on the topology's graph, computed once per
// (src, dst) pair and cached. Each kind of topology has an ordered list of routing stages; a stage
// opens some edges for the pair, and the route is the shortest path over the open edges of the
// first stage that reaches the destination. Ties between shortest paths go to the neighbour
// wired first (the builder wires a torus's positive port before its negative one).
//  - 2D torus: inside one instance, or one UltraServer with a Z ring: dimension order: the source's
//    row (X), then the destination's column (Y), then the Z ring at the destination's coordinates
//    (each a ring, so the shorter wrap wins; a tie goes the positive way);
//  - switches (NVSwitch, trn3 NeuronSwitch): direct through the nearest switch that holds both
//    (trn3: server switch, then the UltraServer's switch, then the direct inter-rack link);
//  - rail-optimised Clos between instances: up-down: chip -> leaf -> chip when both are on one
//    leaf, otherwise chip -> leaf -> spine -> leaf -> chip with the spine chosen by a fixed hash
//    (splitmix64), the equal-cost choice, of what tells apart the pairs that can share a link of
//    that spine: the source's instance within its leaf group, the instance offset to the
//    destination and the two rails (router.cpp, clos_spine_hash). Every link's pairs draw
//    independent spines, as with a hash of the chip pair, and a pair moved by whole leaf groups of
//    instances keeps its spine.
// On a torus (trn1, trn2, trn2u), a pair of chips inside one UltraServer (or instance, where
// there are none) past the first is routed as the image of the same pair in the first, its links
// shifted by whole units (unit_translation.hpp: the units are wired alike, and the torus and
// Z-ring rules read only positions inside the unit): the search runs once per pair of positions,
// not once per unit (at 65,536 chips, 115 k searches of a replay's DP rings). Switched clusters
// (GPUs, trn3) are not translated.
// A transfer's path (path()) adds the sender's DMA link in front of the route where DMA engines
// move its bytes: between two cores of one chip, and on Trainium over device links (torus, Z
// ring, NeuronSwitch). Routes over EFA go without it (the NIC reads device memory), and so do
// GPUs' NVLink routes (SMs send).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trnsim/net/flat_index.hpp"
#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct UnitTranslation;  // net-internal (src/net/unit_translation.hpp)

struct Route {
  std::uint32_t first = 0;  // offset of its links in Router's link store
  std::uint32_t hops = 0;
  double latency = 0;       // seconds, the sum over its links
  double bottleneck = 0;    // bytes/s, the smallest link bandwidth along it (+infinity: no link)
};

class Router {
 public:
  explicit Router(const Topology& topology);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Contract: the route from src_chip to dst_chip over the links between chips (no link when
  // equal). First call per pair: the image's route shifted (above), the Clos path read from the
  // topology's tables, or a breadth-first search per stage tried, over the few vertices its open
  // edges reach (a torus row and column, a switch's ports); later calls one hash lookup. Throws
  // InputError when the chips are not connected.
  const Route& route(int src_chip, int dst_chip);
  // Contract: the links a transfer from src_rank to dst_rank crosses: its route, after the
  // sender's DMA link where DMA engines move it (see above); path(r, r) is r's DMA link alone
  // (a reduction reading its operand). First call per (src_rank, dst chip): route(), and a copy
  // with the DMA link in front where there is one (kept: later calls one hash lookup); else the
  // route itself (later calls two lookups, this index's and route()'s).
  const Route& path(int src_rank, int dst_rank);
  std::span<const LinkId> links(const Route& r) const {
    return {store_.data() + r.first, static_cast<std::size_t>(r.hops)};
  }
  const Topology& topology() const { return *topo_; }
  // The topology's translations by whole units (unit_translation.hpp), computed once here.
  const UnitTranslation& translation() const { return *translation_; }
  std::size_t cached_routes() const { return cache_.size(); }

 private:
  class Search;  // the breadth-first search and its reusable state (router.cpp)
  void finish(Route& r);  // latency and bottleneck of the links from r.first on; appends r to routes_
  // Appends the links of the route of (src_chip, dst_chip)'s image in the first unit, shifted by
  // their unit, sets r.first and returns true; false, with none of the shifted links appended
  // (the image's own route stays cached), where the chips are not in one later unit of a torus,
  // the image has no route, or a link of the image does not translate.
  bool translated(int src_chip, int dst_chip, Route& r);
  // Appends the links of the first routing stage's shortest path (see above); InputError when none reaches.
  void search(int src_chip, int dst_chip);

  const Topology* topo_;
  std::unique_ptr<UnitTranslation> translation_;
  std::vector<LinkId> store_;
  std::vector<Route> routes_;
  FlatIndex cache_, paths_;  // index in routes_
  std::unique_ptr<Search> search_;
};

}  // namespace trnsim::net
