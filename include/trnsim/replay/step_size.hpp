#pragma once
// Guards run before a step is simulated, so that an input too large for the machine or for the
// simulated clock is a named input error (exit 2 with the estimate), not an allocation failure or
// an overflow of sim::Time deep inside the replay.
#include <cstdint>
#include <vector>

#include "trnsim/hw/specs.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::replay {

// What simulating one step will hold in memory, estimated from the plan alone (before the graph
// is built): tasks (one engine event each) and bytes. Within a small factor of what a run takes,
// erring high (see step_size.cpp for the figures it is fitted on).
struct StepSize {
  double tasks = 0;
  double bytes = 0;
};

// Contract: O(1); `symmetric` as BuildOptions::symmetric (one rank per pipeline stage simulated).
StepSize estimate_step_size(const hw::ClusterSpec& cluster, const workload::ModelSpec& model,
                            const workload::Plan& plan, bool symmetric);

// Contract: throws InputError with the estimate when `size` needs more than `max_bytes` (0: no
// limit), naming the limit's option (`--max-memory`) and `--force`.
void check_step_size(const StepSize& size, double max_bytes);

// The longest step sim::Time holds with room to spare: 100 days, in seconds (its range is about
// +-106 days of picoseconds).
inline constexpr double kMaxStepSeconds = 100.0 * 86400.0;

// A lower bound of the step's simulated time, in seconds: the busiest stream of a simulated rank,
// its tasks back to back: compute at `work_seconds` (per StepGraph::works entry), a collective
// its launch cost, every collective and transfer half its bytes at the cluster's fastest rate.
// O(tasks).
double estimate_step_seconds(const workload::StepGraph& graph, const std::vector<double>& work_seconds,
                             const hw::ClusterSpec& cluster);

// Contract: throws InputError with the estimate when `seconds` exceeds kMaxStepSeconds.
void check_step_seconds(double seconds);

}  // namespace trnsim::replay
