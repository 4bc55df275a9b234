#pragma once
// StepGraph::rank_slot for a pass over the tasks in id order: build_step emits each simulated
// rank's tasks in one run, so the slot of the last rank seen answers almost every call, where
// rank_slot searches simulated_ranks every time (the search was 2-4 % of a sweep's plan, in
// estimate_step_seconds, stage_compute_seconds and the other per-task passes).
#include <cstddef>
#include <cstdint>

#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

class RankSlotCache {
 public:
  explicit RankSlotCache(const StepGraph& graph) : graph_(&graph) {}
  // Contract: graph.rank_slot(rank), the same value and the same InternalError for a rank that is
  // not simulated; O(1) when `rank` is the last one asked for, O(log simulated ranks) otherwise.
  std::size_t operator()(std::int32_t rank) {
    if (rank != rank_ || !known_) {
      slot_ = graph_->rank_slot(rank);
      rank_ = rank;
      known_ = true;
    }
    return slot_;
  }

 private:
  const StepGraph* graph_;
  std::int32_t rank_ = 0;
  std::size_t slot_ = 0;
  bool known_ = false;
};

}  // namespace trnsim::workload
