#pragma once
// The interconnect of a cluster as a directed graph: vertices are chips (their NeuronCores behind
// them) and switches; edges are links with a bandwidth (bytes/s) and a latency (s). The graph is a
// Boost.Graph (LinkGraph, src/net/link_graph.hpp, net-internal so that Boost stays out of the
// public headers); routes (router.hpp), the DOT drawing and the bisection bandwidth (bisection.hpp)
// are computed on it. Built once from a hw::ClusterSpec; immutable afterwards.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trnsim/enum_names.hpp"
#include "trnsim/hw/device_map.hpp"
#include "trnsim/hw/specs.hpp"

namespace trnsim::net {

using VertexId = std::int32_t;
using LinkId = std::int32_t;

enum class VertexKind : std::uint8_t { Chip, ServerSwitch, RackSwitch, NvSwitch, Leaf, Spine };
constexpr auto enum_table(VertexKind) {
  using enum VertexKind;
  return std::array{EnumName{Chip, "chip"},         EnumName{ServerSwitch, "server-switch"},
                    EnumName{RackSwitch, "rack-switch"}, EnumName{NvSwitch, "nvswitch"},
                    EnumName{Leaf, "leaf"},         EnumName{Spine, "spine"}};
}

enum class LinkKind : std::uint8_t {
  Dma,           // one rank's DMA engines, as collectives get them (a loop on its chip): every
                 // core-to-core transfer, every send over a device link, every reduction's read
                 // of its local operand
  NeuronLink,    // torus X/Y link inside an instance
  UltraServerZ,  // trn2u: ring between instances of an UltraServer (chips at the same coordinates)
  ServerSwitch,  // trn3: chip <-> intra-server NeuronSwitch
  RackSwitch,    // trn3: chip <-> inter-server switch of the UltraServer
  InterRack,     // trn3: direct link to the chip at the same position in the next UltraServer
  NvLink,        // GPU <-> NVSwitch
  EfaPort,       // chip <-> its rail's leaf switch (the chip's share of the instance's EFA)
  ClosUplink,    // leaf -> spine
  ClosDownlink,  // spine -> leaf
};
constexpr auto enum_table(LinkKind) {
  using enum LinkKind;
  return std::array{EnumName{Dma, "dma"},
                    EnumName{NeuronLink, "neuronlink"},
                    EnumName{UltraServerZ, "ultraserver-z"},
                    EnumName{ServerSwitch, "server-switch"},
                    EnumName{RackSwitch, "rack-switch"},
                    EnumName{InterRack, "inter-rack"},
                    EnumName{NvLink, "nvlink"},
                    EnumName{EfaPort, "efa-port"},
                    EnumName{ClosUplink, "clos-uplink"},
                    EnumName{ClosDownlink, "clos-downlink"}};
}
inline constexpr int kLinkKinds = static_cast<int>(enum_table(LinkKind{}).size());

struct Vertex {
  VertexKind kind = VertexKind::Chip;
  int index = 0;  // chip: global chip index; switch: index among switches of its kind
};
// "chip12", "leaf3": the vertex's kind and index (Topology::vertex_name).
std::string vertex_label(const Vertex& v);

struct Link {
  VertexId src = 0;
  VertexId dst = 0;
  LinkKind kind = LinkKind::Dma;
  double bandwidth = 0;  // bytes/s, this direction
  double latency = 0;    // seconds
};

struct LinkGraph;

class Topology {
 public:
  // Contract: O(chips + links). Throws InputError for a cluster whose wiring is inconsistent
  // (torus dimensions that do not multiply to the chip count, zero bandwidths it needs).
  explicit Topology(const hw::ClusterSpec& cluster);
  ~Topology();
  // Routers and models keep a pointer to their topology: it never moves.
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const hw::ClusterSpec& cluster() const { return cluster_; }
  const hw::DeviceMap& devices() const { return devices_; }
  // The Boost graph (net-internal: include src/net/link_graph.hpp to use it).
  const LinkGraph& graph() const { return *graph_; }
  int vertex_count() const { return static_cast<int>(vertices_.size()); }
  int link_count() const { return static_cast<int>(links_.size()); }
  // The graph's vertex and edge attributes by id: a vertex's id is its Boost vertex index, an
  // edge carries its link's id (the hot paths read links by id).
  const Vertex& vertex(VertexId v) const { return vertices_[static_cast<std::size_t>(v)]; }
  const Link& link(LinkId l) const { return links_[static_cast<std::size_t>(l)]; }
  const std::vector<Link>& links() const { return links_; }
  std::string vertex_name(VertexId v) const;

  // Chips are vertices [0, chips); each rank's DMA link is a loop on its chip's vertex, and the
  // first ranks() links are those, by rank.
  VertexId chip_vertex(int chip) const { return chip; }
  LinkId dma_link(int rank) const { return rank; }
  // The link u -> v, or -1 if none. O(out-degree of u): a scan of u's links in the graph (no
  // index of pairs: at 65,536 chips building one was about a tenth of a run; the router reads the
  // links it needs by construction, below).
  LinkId find_link(VertexId u, VertexId v) const;

  // The Clos between instances, for up-down routing.
  bool has_clos() const { return !spines_.empty(); }
  VertexId leaf(int rail, int instance) const;
  VertexId spine(int k) const { return spines_[static_cast<std::size_t>(k)]; }
  int spine_count() const { return static_cast<int>(spines_.size()); }
  int rails() const { return rails_; }                     // leaves per leaf group: an instance's chips
  int leaf_group_size() const { return leaf_group_size_; }  // instances per leaf group (leaf_radix)
  // The Clos's links by construction, O(1) (a route across the Clos reads four per chip pair):
  // chip c's EFA port up to its rail leaf and down from it, and the links between a leaf and
  // spine k, up and down. -1 where the cluster has no Clos.
  LinkId efa_port_up(int chip) const { return clos_link(efa_up_, static_cast<std::size_t>(chip)); }
  LinkId efa_port_down(int chip) const { return clos_link(efa_down_, static_cast<std::size_t>(chip)); }
  LinkId clos_uplink(VertexId leaf, int k) const { return clos_link(clos_up_, leaf_spine_slot(leaf, k)); }
  LinkId clos_downlink(int k, VertexId leaf) const { return clos_link(clos_down_, leaf_spine_slot(leaf, k)); }

  // Writes Graphviz DOT with boost::write_graphviz: vertices labelled with their names (chips as
  // boxes, switches as ellipses), links between distinct vertices labelled with kind and GB/s.
  void write_dot(std::ostream& os) const;

 private:
  friend class TopologyBuilder;
  VertexId add_vertex(VertexKind kind, int index);
  // Adds u -> v and returns its id. A link wired right after one between the same pair, of the
  // same kind, merges into it (bandwidths add) and returns its id: a ring of two (a torus
  // dimension, a Z ring or an inter-rack ring of size 2) wires a chip's two ports of that ring to
  // the same neighbour, one after the other. The wirings make every other pair distinct (a test
  // checks each kind of cluster), so no index of pairs is kept.
  LinkId add_link(VertexId u, VertexId v, LinkKind kind, double bandwidth, double latency);
  // Adds a DMA loop on `chip` (never merged: one per rank; find_link does not see it).
  void add_dma_link(VertexId chip, double bandwidth);
  // u -> v and v -> u: their ids.
  std::pair<LinkId, LinkId> add_duplex(VertexId u, VertexId v, LinkKind up, LinkKind down, double bandwidth,
                                       double latency_up, double latency_down);
  static LinkId clos_link(const std::vector<LinkId>& table, std::size_t i) {
    return i < table.size() ? table[i] : -1;
  }
  // Leaves are consecutive vertices (the builder adds each with its spine links, no vertex between).
  std::size_t leaf_spine_slot(VertexId leaf, int k) const {
    return leaves_.empty() ? ~std::size_t{0}
                           : static_cast<std::size_t>(leaf - leaves_.front()) * spines_.size() + static_cast<std::size_t>(k);
  }

  hw::ClusterSpec cluster_;
  hw::DeviceMap devices_;
  std::unique_ptr<LinkGraph> graph_;
  std::vector<Vertex> vertices_;  // by vertex index
  std::vector<Link> links_;       // by link id
  std::vector<VertexId> leaves_;  // [leaf_group * rails + rail]
  int rails_ = 0;
  int leaf_group_size_ = 1;
  std::vector<VertexId> spines_;
  std::vector<LinkId> efa_up_, efa_down_;  // by chip
  std::vector<LinkId> clos_up_, clos_down_;  // [leaf slot * spines + k]
};

}  // namespace trnsim::net
