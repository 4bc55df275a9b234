#pragma once
// Replaying an execution trace (workload/trace.hpp) on a cluster: the same engine, network and
// reports as a model run, with the trace's StepGraph instead of build_step's. FLOP/byte kernels
// are priced on the cluster's chip (so a trace recorded on trn1 replays at trn2 speed); measured
// durations are kept as recorded, times the user's scale.
#include <string>

#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/trace/trace.hpp"

namespace trnsim::replay {

// --scale-durations compute=F: measured compute durations are multiplied by F (> 0).
struct DurationScale {
  double compute = 1;
};

// Contract: parses "compute=F" (F a number > 0); InputError naming the option otherwise.
DurationScale parse_duration_scale(const std::string& text);

// Contract: a StepRun ready for replay_step: the trace's graph, each work priced on input.cluster
// (or its measured time x scale.compute), memory estimated from input.model when the trace names
// its model (input.model.layers > 0; then input.training and input.parallelism are its resolved
// plan), else none. Throws InputError naming the trace file when the trace has more ranks than the
// cluster or a plan that does not fit its own model. O(works x kernels + tasks).
StepRun prepare_trace(const StepInput& input, trace::Trace trace, const DurationScale& scale = {});

// prepare_trace then replay_step.
StepRun simulate_trace(const StepInput& input, trace::Trace trace, const DurationScale& scale = {});

}  // namespace trnsim::replay
