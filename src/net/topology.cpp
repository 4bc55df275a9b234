#include "trnsim/net/topology.hpp"

#include <fmt/core.h>

#include "link_graph.hpp"
#include "topology_builder.hpp"
#include "trnsim/error.hpp"

namespace trnsim::net {

namespace {
std::uint64_t pair_key(VertexId u, VertexId v) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(u)) << 32) | static_cast<std::uint32_t>(v);
}
}  // namespace

Topology::Topology(const hw::ClusterSpec& cluster)
    : cluster_(cluster), devices_(cluster), graph_(std::make_unique<LinkGraph>()) {
  TopologyBuilder::build(*this);
}

Topology::~Topology() = default;

VertexId Topology::add_vertex(VertexKind kind, int index) {
  vertices_.push_back(Vertex{kind, index});
  boost::add_vertex(graph_->graph);
  return static_cast<VertexId>(vertices_.size() - 1);
}

void Topology::add_link(VertexId u, VertexId v, LinkKind kind, double bandwidth, double latency) {
  if (!(bandwidth > 0)) {
    throw InputError(fmt::format("{}: the {} link {} -> {} needs a positive bandwidth, found {}", cluster_.instance.name,
                                 to_string(kind), vertex_name(u), vertex_name(v), bandwidth));
  }
  const auto key = pair_key(u, v);
  if (const std::uint32_t* at = link_index_.find(key)) {
    Link& existing = links_[*at];
    if (existing.kind == kind) {
      existing.bandwidth += bandwidth;
      return;
    }
    throw InternalError(fmt::format("topology: two links of different kinds {} -> {}", vertex_name(u), vertex_name(v)));
  }
  const auto id = static_cast<LinkId>(links_.size());
  links_.push_back(Link{u, v, kind, bandwidth, latency});
  link_index_.insert(key, static_cast<std::uint32_t>(id));
  boost::add_edge(static_cast<std::size_t>(u), static_cast<std::size_t>(v), id, graph_->graph);
}

void Topology::add_dma_link(VertexId chip, double bandwidth) {
  if (!(bandwidth > 0)) {
    throw InputError(fmt::format("{}: the DMA link of {} needs a positive bandwidth, found {}", cluster_.instance.name,
                                 vertex_name(chip), bandwidth));
  }
  const auto id = static_cast<LinkId>(links_.size());
  links_.push_back(Link{chip, chip, LinkKind::Dma, bandwidth, 0.0});
  boost::add_edge(static_cast<std::size_t>(chip), static_cast<std::size_t>(chip), id, graph_->graph);
}

void Topology::add_duplex(VertexId u, VertexId v, LinkKind up, LinkKind down, double bandwidth, double latency_up,
                          double latency_down) {
  add_link(u, v, up, bandwidth, latency_up);
  add_link(v, u, down, bandwidth, latency_down);
}

LinkId Topology::find_link(VertexId u, VertexId v) const {
  const std::uint32_t* at = link_index_.find(pair_key(u, v));
  return at == nullptr ? -1 : static_cast<LinkId>(*at);
}

VertexId Topology::leaf(int rail, int instance) const {
  const int group = instance / leaf_group_size_;
  return leaves_[static_cast<std::size_t>(group * rails_ + rail)];
}

std::string vertex_label(const Vertex& v) { return fmt::format("{}{}", to_string(v.kind), v.index); }

std::string Topology::vertex_name(VertexId v) const { return vertex_label(vertex(v)); }

}  // namespace trnsim::net
