// Topology::write_dot: the topology's graph through boost::write_graphviz.
#include <ostream>

#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graphviz.hpp>
#include <fmt/core.h>

#include "link_graph.hpp"
#include "trnsim/net/topology.hpp"

namespace trnsim::net {

namespace {
// DMA links are loops: left out of the picture.
struct BetweenVertices {
  const LinkGraph::Graph* graph = nullptr;
  bool operator()(const LinkGraph::Edge& e) const { return boost::source(e, *graph) != boost::target(e, *graph); }
};
}  // namespace

void Topology::write_dot(std::ostream& os) const {
  const LinkGraph::Graph& g = graph_->graph;
  const boost::filtered_graph<LinkGraph::Graph, BetweenVertices> drawn(g, BetweenVertices{&g});
  const auto graph_writer = [this](std::ostream& out) {
    out << "  // " << cluster_.instances << " x " << cluster_.instance.name << "\n";
  };
  const auto vertex_writer = [this](std::ostream& out, LinkGraph::VertexDescriptor v) {
    const auto id = static_cast<VertexId>(v);
    out << fmt::format(" [label=\"{}\", shape={}]", vertex_name(id),
                       vertex(id).kind == VertexKind::Chip ? "box" : "ellipse");
  };
  const auto edge_writer = [this, &g](std::ostream& out, const LinkGraph::Edge& e) {
    const Link& l = link(g[e]);
    out << fmt::format("[label=\"{} {:.0f} GB/s\"]", to_string(l.kind), l.bandwidth / 1e9);
  };
  boost::write_graphviz(os, drawn, vertex_writer, edge_writer, graph_writer);
}

}  // namespace trnsim::net
