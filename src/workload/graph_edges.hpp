#pragma once
// Dependency edges collected while tasks are created, turned into StepGraph's CSR successors.
#include <utility>
#include <vector>

#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

class EdgeList {
 public:
  void add(TaskId from, TaskId to) { edges_.emplace_back(from, to); }
  void reserve(std::size_t n) { edges_.reserve(n); }
  // Contract: every id < graph.tasks.size(). Successors of a task keep insertion order. O(E + V).
  void to_csr(StepGraph& graph) const;

 private:
  std::vector<std::pair<TaskId, TaskId>> edges_;
};

}  // namespace trnsim::workload
