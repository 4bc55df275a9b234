#pragma once
// The one documented rule for fields an experiment leaves null ("not published"), for `trnsim run`
// and `trnsim validate` alike (docs/architecture.md, "From an experiment file to a report", step
// 3). Field by field:
//   1. the experiment's value;
//   2. else the software's recipe for this model name (SoftwareSpec::recipes), when it states it;
//   3. else the software's default (SoftwareSpec::defaults), when it states it;
//   4. else the plainest plan that fits: micro_batch 1; sequence_parallel off; zero 0;
//      virtual_stages 1 (when the schedule is set to 1f1b-interleaved, the smallest v >= 2 that
//      Megatron-LM's interleaving allows: v dividing the layers per stage); schedule 1f1b (1f1b-interleaved when virtual_stages > 1);
//      recompute the first of none, selective, full whose memory estimate fits the rank's HBM
//      (full when none fits: the out-of-memory finding then reports it).
//   training.attention: the recipe's, else the software's kernels.attention.
// Never an optimum over the unknowns: that would bias every prediction the same way. The band of
// step times the unknowns allow is a separate question (plan_band.hpp).
// A stated value that the plan cannot run (sequence parallelism with tp = 1, ZeRO-1 with dp = 1)
// is dropped to the plainest value, and the choice says so.
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::replay {

// Contract: every optional of the result's training and parallelism is set; `choices` has one line
// per field the experiment left unset, with the value and the rule. Cost: at most three memory
// estimates, no simulation. Deterministic.
workload::ResolvedPlan resolve_plan(const StepInput& input);

}  // namespace trnsim::replay
