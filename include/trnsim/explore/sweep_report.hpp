#pragma once
// What `trnsim sweep` and `trnsim merge` print and write: the ranked text table and the CSV. Both
// are functions of the SweepResult alone, so merged shards print what the unsharded sweep prints.
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trnsim/explore/sweep.hpp"

namespace trnsim::explore {

// Short column heads for the breakdown parts, in report::Part order.
inline constexpr std::array<const char*, report::kPartCount> kPartHeads{"fwd",     "bwd",     "recomp",  "optim",
                                                                        "tp_comm", "pp_comm", "dp_comm", "bubble"};

// Invalid points counted by rule, most frequent first; equal counts in the rules' alphabetical order.
std::vector<std::pair<std::string, std::size_t>> rules_by_count(const std::map<std::string, std::size_t>& counts);

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
