#pragma once
// Executor: runs a StepGraph on the event engine. Each simulated rank has one stream per
// workload::Stream kind; a task starts when its dependency count reaches zero and its stream is
// free (ready tasks queue per stream in the order they became ready). A collective call starts on
// the network when every simulated member task (same Task::call) has reached it; its members hold their streams until it
// ends. Compute tasks take the cost model's time, stretched by `comm_compute_slowdown` when the
// rank has a collective or transfer on the network at the task's start (GPUs run NCCL on SMs).
#include <span>

#include "trnsim/replay/communicator.hpp"
#include "trnsim/replay/timeline.hpp"
#include "trnsim/sim/engine.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::replay {

struct ExecutorOptions {
  double comm_compute_slowdown = 1.0;  // hw::Calibration::comm_compute_slowdown
};

// Contract: simulates `graph` from the engine's now() until no task is left; work_seconds[i] is
// the duration of StepGraph::works[i] on one rank (cost::ComputeModel, or a trace's measurement).
// Throws InternalError if a task never becomes ready (a dependency cycle or a collective whose
// members cannot all arrive). Cost: O(tasks + edges) plus the engine's and network's work.
Timeline execute(sim::Engine& engine, const workload::StepGraph& graph,
                 std::span<const double> work_seconds, Communicator& comm,
                 const ExecutorOptions& options = {});

}  // namespace trnsim::replay
