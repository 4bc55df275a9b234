#pragma once
// Net-internal: the Boost graph of a Topology. Only src/net/ includes it, so that Boost.Graph is
// compiled where it is used, not by every user of the public headers.
#include <boost/graph/compressed_sparse_row_graph.hpp>

#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct LinkGraph {
  // Vertex descriptors are VertexIds; each edge carries its LinkId (the link's attributes are
  // Topology::link(id)). A vertex's out-edges are in wiring order: a breadth-first search meets a
  // vertex's neighbours in the order the builder wired them, which routing uses as its tie-break.
  // Compressed sparse rows of 32-bit indices, built once from the finished link list: three
  // arrays, where an adjacency list allocated each edge's property on its own (at 65,536 chips,
  // 802,816 of them).
  using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, LinkId, boost::no_property,
                                                   std::uint32_t, std::uint32_t>;
  using Edge = boost::graph_traits<Graph>::edge_descriptor;
  using VertexDescriptor = boost::graph_traits<Graph>::vertex_descriptor;
  // Contract: the graph of `vertices` vertices and `links`, every link an edge. O(vertices + links).
  LinkGraph(std::size_t vertices, const std::vector<Link>& links);
  Graph graph;
};

}  // namespace trnsim::net
