#pragma once
// Dependency order of a StepGraph, checked on Boost.Graph before a replay: the replay executor
// counts dependencies and never polls, so a graph that cannot be ordered would leave tasks waiting
// for ever. This check names the tasks of one cycle instead.
//
// The order respects what the executor waits for, not only the edges: a collective call (all
// tasks with the same Task::call) starts when every member has arrived and its members finish
// together, so every successor of any member waits for all members. Two members of one call each
// waiting (through other tasks) for the other is a cycle here, as it is a deadlock there.
#include <string>
#include <utility>
#include <vector>

#include "trnsim/error.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

// A dependency cycle: tasks() lists its tasks in dependency order (each waits for the one before
// it, the first for the last), starting at its lowest id. Two consecutive members of one
// collective call wait for each other through the call.
class CycleError : public InternalError {
 public:
  CycleError(std::vector<TaskId> tasks, const std::string& message)
      : InternalError(message), tasks_(std::move(tasks)) {}
  const std::vector<TaskId>& tasks() const { return tasks_; }

 private:
  std::vector<TaskId> tasks_;
};

// Contract: every task id once, each after its dependencies and after every member of the
// collective calls those depend on (depth-first finish order, reversed: deterministic). Throws
// CycleError with one cycle's tasks when there is none. O(tasks + edges + call members) time and
// memory (a compressed sparse row copy of the graph, built once per call).
std::vector<TaskId> check_acyclic(const StepGraph& graph);

}  // namespace trnsim::workload
