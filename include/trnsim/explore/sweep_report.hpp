#pragma once
// What `trnsim sweep` and `trnsim merge` print and write: the ranked text table and the CSV. Both
// are functions of the SweepResult alone, so merged shards print what the unsharded sweep prints.
#include <cstddef>
#include <string>

#include "trnsim/explore/sweep.hpp"

namespace trnsim::explore {

// The simulated plans, fastest first (ties: the earlier point). O(n log n).
std::vector<const PlanOutcome*> ranked(const SweepResult& result);

// The header (what ran, counts by status, invalid plans counted by rule, the out-of-memory
// count), then the `top` fastest plans with their breakdown (seconds per part) and main finding.
std::string format_sweep(const SweepResult& result, std::size_t top);

// One row per point, valid or not, in enumeration order (header first; numbers {:.6g}):
// index,<vary paths>,tp,pp,dp,micro_batch,virtual_stages,schedule,recompute,zero,sequence_parallel,
// status,reason,step_time_s,tokens_per_s,mfu,peak_memory_GiB,lower_bound_s,<breakdown parts>,top_finding
std::string sweep_csv(const SweepResult& result);

}  // namespace trnsim::explore
