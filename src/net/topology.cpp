#include "trnsim/net/topology.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "link_graph.hpp"
#include "topology_builder.hpp"
#include "trnsim/error.hpp"

namespace trnsim::net {

namespace {
// The links named by a list of ids, as the (source, target) pairs the graph's sorted constructor
// reads (an input iterator: no array of pairs beside the link list).
class LinkEnds {
 public:
  using Pair = std::pair<std::uint32_t, std::uint32_t>;
  using iterator_category = std::input_iterator_tag;
  using value_type = Pair;
  using difference_type = std::ptrdiff_t;
  using pointer = const Pair*;
  using reference = Pair;
  LinkEnds(const std::vector<Link>& links, const LinkId* at) : links_(&links), at_(at) {}
  Pair operator*() const {
    const Link& l = (*links_)[static_cast<std::size_t>(*at_)];
    return {static_cast<std::uint32_t>(l.src), static_cast<std::uint32_t>(l.dst)};
  }
  const Pair* operator->() const {
    ends_ = **this;
    return &ends_;
  }
  LinkEnds& operator++() {
    ++at_;
    return *this;
  }
  LinkEnds operator++(int) {
    LinkEnds before = *this;
    ++at_;
    return before;
  }
  bool operator==(const LinkEnds& o) const { return at_ == o.at_; }

 private:
  const std::vector<Link>* links_;
  const LinkId* at_;
  mutable Pair ends_{};
};
}  // namespace

LinkGraph::LinkGraph(std::size_t vertices, const std::vector<Link>& links) {
  // The link ids sorted by source, in wiring order within a source (a counting sort), as the
  // sorted constructor wants them; they are also the edges' properties.
  std::vector<std::uint32_t> start(vertices + 1, 0);
  for (const Link& l : links) ++start[static_cast<std::size_t>(l.src) + 1];
  for (std::size_t v = 0; v < vertices; ++v) start[v + 1] += start[v];
  std::vector<LinkId> ids(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) ids[start[static_cast<std::size_t>(links[i].src)]++] = static_cast<LinkId>(i);
  graph = Graph(boost::edges_are_sorted, LinkEnds(links, ids.data()), LinkEnds(links, ids.data() + ids.size()),
                ids.begin(), static_cast<std::uint32_t>(vertices), static_cast<std::uint32_t>(links.size()));
}

Topology::Topology(const hw::ClusterSpec& cluster) : cluster_(cluster), devices_(cluster) {
  TopologyBuilder::build(*this);
  graph_ = std::make_unique<LinkGraph>(vertices_.size(), links_);
}

Topology::~Topology() = default;

VertexId Topology::add_vertex(VertexKind kind, int index) {
  vertices_.push_back(Vertex{kind, index});
  return static_cast<VertexId>(vertices_.size() - 1);
}

LinkId Topology::add_link(VertexId u, VertexId v, LinkKind kind, double bandwidth, double latency) {
  if (!(bandwidth > 0)) {
    throw InputError(fmt::format("{}: the {} link {} -> {} needs a positive bandwidth, found {}", cluster_.instance.name,
                                 to_string(kind), vertex_name(u), vertex_name(v), bandwidth));
  }
  if (!links_.empty() && links_.back().src == u && links_.back().dst == v) {
    Link& existing = links_.back();
    if (existing.kind == kind) {
      existing.bandwidth += bandwidth;
      return static_cast<LinkId>(links_.size() - 1);
    }
    throw InternalError(fmt::format("topology: two links of different kinds {} -> {}", vertex_name(u), vertex_name(v)));
  }
  const auto id = static_cast<LinkId>(links_.size());
  links_.push_back(Link{u, v, kind, bandwidth, latency});
  return id;
}

void Topology::add_dma_link(VertexId chip, double bandwidth) {
  if (!(bandwidth > 0)) {
    throw InputError(fmt::format("{}: the DMA link of {} needs a positive bandwidth, found {}", cluster_.instance.name,
                                 vertex_name(chip), bandwidth));
  }
  links_.push_back(Link{chip, chip, LinkKind::Dma, bandwidth, 0.0});
}

std::pair<LinkId, LinkId> Topology::add_duplex(VertexId u, VertexId v, LinkKind up, LinkKind down, double bandwidth,
                                               double latency_up, double latency_down) {
  const LinkId there = add_link(u, v, up, bandwidth, latency_up);
  return {there, add_link(v, u, down, bandwidth, latency_down)};
}

LinkId Topology::find_link(VertexId u, VertexId v) const {
  const LinkGraph::Graph& g = graph_->graph;
  for (auto [e, end] = boost::out_edges(static_cast<std::uint32_t>(u), g); e != end; ++e) {
    const LinkId l = g[*e];
    if (static_cast<VertexId>(boost::target(*e, g)) == v && links_[static_cast<std::size_t>(l)].kind != LinkKind::Dma) {
      return l;
    }
  }
  return -1;
}

VertexId Topology::leaf(int rail, int instance) const {
  const int group = instance / leaf_group_size_;
  return leaves_[static_cast<std::size_t>(group * rails_ + rail)];
}

std::string vertex_label(const Vertex& v) { return fmt::format("{}{}", to_string(v.kind), v.index); }

std::string Topology::vertex_name(VertexId v) const { return vertex_label(vertex(v)); }

}  // namespace trnsim::net
