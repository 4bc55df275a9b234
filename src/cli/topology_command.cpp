// `trnsim topology`: a summary of a cluster's interconnect (vertices, links by kind, bisection
// bandwidth) and, with --dot, its Graphviz drawing.
#include <algorithm>
#include <array>
#include <map>
#include <string>

#include <fmt/core.h>

#include "command.hpp"
#include "output_file.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/bisection.hpp"
#include "trnsim/net/topology.hpp"

namespace trnsim::cli {

namespace {
struct TopologyOptions {
  ClusterOption cluster;
  std::string dot;
};

int run_topology(const TopologyOptions& o) {
  const int nodes = o.cluster.instances();
  const net::Topology t(config::load_cluster(o.cluster.instance, nodes));
  fmt::print("{} x {}: {} ranks on {} chips\n", nodes, o.cluster.instance, t.devices().ranks(), t.devices().chips());
  std::map<std::string, int> vertices;
  for (net::VertexId v = 0; v < t.vertex_count(); ++v) ++vertices[std::string(trnsim::to_string(t.vertex(v).kind))];
  fmt::print("vertices: {}\n", t.vertex_count());
  for (const auto& [kind, n] : vertices) fmt::print("  {:<16} {:>8}\n", kind, n);
  std::array<int, net::kLinkKinds> count{};
  std::array<double, net::kLinkKinds> bw{};
  for (const auto& l : t.links()) {
    ++count[static_cast<std::size_t>(l.kind)];
    bw[static_cast<std::size_t>(l.kind)] = l.bandwidth;
  }
  fmt::print("links (directed): {}\n", t.link_count());
  fmt::print("  {:<16} {:>8} {:>14}\n", "kind", "count", "GB/s each");
  for (std::size_t k = 0; k < count.size(); ++k) {
    if (count[k] == 0) continue;
    fmt::print("  {:<16} {:>8} {:>14.1f}\n", trnsim::to_string(static_cast<net::LinkKind>(k)), count[k], bw[k] / 1e9);
  }
  fmt::print("bisection bandwidth (first half of the chips to the second, one direction): {:.1f} GB/s\n",
             net::bisection_bandwidth(t) / 1e9);
  if (!o.dot.empty()) {
    write_file(o.dot, [&t](std::ostream& os) { t.write_dot(os); });
    fmt::print("wrote {}\n", o.dot);
  }
  return 0;
}
}  // namespace

void add_topology_command(CLI::App& app, Action& action) {
  const auto [sub, opts] = add_subcommand(
      app, action, "topology", "Summarise a cluster's interconnect, optionally as Graphviz DOT", run_topology);
  opts->cluster.add_to(*sub);
  sub->add_option("--dot", opts->dot, "Write the graph as Graphviz DOT to this file");
}

}  // namespace trnsim::cli
