#include "trnsim/net/bisection.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

namespace trnsim::net {

namespace {
// Integer capacities keep push-relabel exact: bandwidths in units of 1 MB/s.
constexpr double kUnit = 1e6;
std::int64_t to_units(double bytes_per_s) { return std::llround(bytes_per_s / kUnit); }
}  // namespace

double bisection_bandwidth(const Topology& t) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const int chips = t.devices().chips();
  if (chips < 2) return 0;
  const auto n = static_cast<std::size_t>(t.vertex_count());
  Graph g(n + 2);
  const std::size_t source = n, sink = n + 1;
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  auto add = [&](std::size_t u, std::size_t v, std::int64_t cap) {
    const auto e = boost::add_edge(u, v, g).first;
    const auto r = boost::add_edge(v, u, g).first;
    capacity[e] = cap;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  for (const Link& l : t.links()) {
    if (l.src != l.dst) add(static_cast<std::size_t>(l.src), static_cast<std::size_t>(l.dst), to_units(l.bandwidth));
  }
  // Every chip can inject and absorb more than all the links together.
  std::int64_t unbounded = 1;
  for (const Link& l : t.links()) unbounded += to_units(l.bandwidth);
  for (int c = 0; c < chips; ++c) {
    if (c < chips / 2) {
      add(source, static_cast<std::size_t>(c), unbounded);
    } else {
      add(static_cast<std::size_t>(c), sink, unbounded);
    }
  }
  return static_cast<double>(boost::push_relabel_max_flow(g, source, sink)) * kUnit;
}

}  // namespace trnsim::net
