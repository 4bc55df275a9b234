#include "trnsim/net/bisection.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "link_graph.hpp"

namespace trnsim::net {

namespace {
// Integer capacities keep push-relabel exact: bandwidths in units of 1 MB/s.
constexpr double kUnit = 1e6;
std::int64_t to_units(double bytes_per_s) { return std::llround(bytes_per_s / kUnit); }
}  // namespace

double bisection_bandwidth(const Topology& t) {
  // Push-relabel works on a residual network: every edge paired with a reverse edge of capacity
  // zero, and one source and one sink. The topology's graph is immutable and has neither, so the
  // residual network is the topology's graph (same vertex ids, its edges in the graph's order,
  // capacities from the links they carry) plus those.
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Residual = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const int chips = t.devices().chips();
  if (chips < 2) return 0;
  const LinkGraph::Graph& g = t.graph().graph;
  const std::size_t n = boost::num_vertices(g);
  Residual r(n + 2);
  const std::size_t source = n, sink = n + 1;
  auto capacity = boost::get(boost::edge_capacity, r);
  auto reverse = boost::get(boost::edge_reverse, r);
  auto add = [&](std::size_t u, std::size_t v, std::int64_t cap) {
    const auto e = boost::add_edge(u, v, r).first;
    const auto back = boost::add_edge(v, u, r).first;
    capacity[e] = cap;
    capacity[back] = 0;
    reverse[e] = back;
    reverse[back] = e;
  };
  // Every chip can inject and absorb more than all the links together.
  std::int64_t unbounded = 1;
  for (const auto e : boost::make_iterator_range(boost::edges(g))) {
    const std::size_t u = boost::source(e, g), v = boost::target(e, g);
    const std::int64_t cap = to_units(t.link(g[e]).bandwidth);
    unbounded += cap;
    if (u != v) add(u, v, cap);  // a chip-local loop carries nothing across the cut
  }
  for (int c = 0; c < chips; ++c) {
    if (c < chips / 2) {
      add(source, static_cast<std::size_t>(c), unbounded);
    } else {
      add(static_cast<std::size_t>(c), sink, unbounded);
    }
  }
  return static_cast<double>(boost::push_relabel_max_flow(r, source, sink)) * kUnit;
}

}  // namespace trnsim::net
