#include "graph_edges.hpp"

#include "trnsim/error.hpp"

namespace trnsim::workload {

void EdgeList::to_csr(StepGraph& graph) const {
  auto& tasks = graph.tasks;
  for (auto& t : tasks) {
    t.deps = 0;
    t.succ_begin = t.succ_end = 0;
  }
  std::vector<std::uint32_t> out_degree(tasks.size() + 1, 0);
  for (const auto& [from, to] : edges_) {
    if (from >= tasks.size() || to >= tasks.size() || from == to) {
      throw InternalError("StepGraph: edge between unknown tasks or a self-loop");
    }
    ++out_degree[from];
    ++tasks[to].deps;
  }
  std::uint32_t offset = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    tasks[i].succ_begin = tasks[i].succ_end = offset;
    offset += out_degree[i];
  }
  graph.successors.assign(edges_.size(), 0);
  for (const auto& [from, to] : edges_) graph.successors[tasks[from].succ_end++] = to;
}

}  // namespace trnsim::workload
