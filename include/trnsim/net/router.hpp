#pragma once
// Routes between chips, computed once per (src, dst) pair and cached:
//  - 2D torus: dimension order (X then Y, then Z between the instances of an UltraServer), each
//    dimension in its shorter wrap direction (a tie goes the positive way);
//  - switches (NVSwitch, trn3 NeuronSwitch): direct through the switch;
//  - rail-optimised Clos: up-down; same rail and leaf: chip -> leaf -> chip, otherwise
//    chip -> leaf -> spine -> leaf -> chip with the spine chosen by a deterministic hash of the pair.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct Route {
  std::uint32_t first = 0;  // offset of its links in Router's link store
  std::uint32_t hops = 0;
  double latency = 0;       // seconds, the sum over its links
  double bottleneck = 0;    // bytes/s, the smallest link bandwidth along it
};

class Router {
 public:
  explicit Router(const Topology& topology) : topo_(&topology) {}

  // Contract: the route from src_chip to dst_chip (the chip-local link when equal). First call per
  // pair O(hops); later calls one hash lookup. Throws InputError when the chips are not connected.
  const Route& route(int src_chip, int dst_chip);
  std::span<const LinkId> links(const Route& r) const {
    return {store_.data() + r.first, static_cast<std::size_t>(r.hops)};
  }
  const Topology& topology() const { return *topo_; }
  std::size_t cached_routes() const { return cache_.size(); }

 private:
  void compute_path(int src, int dst, std::vector<VertexId>& path) const;
  void torus_walk(int instance, int& x, int& y, int tx, int ty, std::vector<VertexId>& path) const;
  void clos_path(int src, int dst, std::vector<VertexId>& path) const;

  const Topology* topo_;
  std::vector<LinkId> store_;
  std::vector<Route> routes_;
  std::unordered_map<std::uint64_t, std::uint32_t> cache_;
  std::vector<VertexId> scratch_;
};

}  // namespace trnsim::net
