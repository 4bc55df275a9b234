#pragma once
// Net-internal: the Boost graph of a Topology. Only src/net/ includes it, so that Boost.Graph is
// compiled where it is used, not by every user of the public headers.
#include <boost/graph/adjacency_list.hpp>

#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct LinkGraph {
  // Vertex descriptors are VertexIds; each edge carries its LinkId (the link's attributes are
  // Topology::link(id)). Out-edges are kept in wiring order (vecS): a breadth-first search meets a
  // vertex's neighbours in the order the builder wired them, which routing uses as its tie-break.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, LinkId>;
  using Edge = boost::graph_traits<Graph>::edge_descriptor;
  using VertexDescriptor = boost::graph_traits<Graph>::vertex_descriptor;
  Graph graph;
};

}  // namespace trnsim::net
