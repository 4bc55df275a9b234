#pragma once
// The one documented rule for fields an experiment leaves null ("not published"): the fastest
// plan that fits in memory. `trnsim run` and `trnsim validate` both use it, through simulate_step.
//
// Candidates, per unset field (a set field keeps its one value):
//   micro_batch      1, 2, 4, 8, 16: those that divide the per-replica batch global_batch / dp.
//   virtual_stages   1, and v = 2, 3, ... when pp > 1, pp x v <= layers and the micro-batches per
//                    pipeline (global_batch / (dp x micro_batch)) are a multiple of pp (Megatron-LM's
//                    interleaving requirement); only 1 when the file sets schedule gpipe or 1f1b.
//   schedule         not searched: 1f1b when virtual_stages = 1, 1f1b-interleaved above. GPipe is
//                    never a candidate: its bubble is 1F1B's ((pp - 1) / m of the step) and it holds
//                    all m micro-batches' activations instead of at most pp.
//   recompute        none, selective, full.
//   zero             0, 1 when dp > 1 (only 0 when dp = 1: there is nothing to shard over).
//   sequence_parallel not searched: tp > 1 (and tp divides seq_len, which SP needs). Under SP the
//                    TP all-reduce becomes a reduce-scatter plus an all-gather with the same bytes
//                    on the wire, norms and dropouts run on 1/tp of the tokens per rank and the
//                    kept activations shrink by tp: it never needs more memory, and it is not
//                    slower while the TP collectives are bandwidth-bound (Llama 7B on trn1, TP 8:
//                    8.0 s against 9.6 s). Not searched, to halve the cost of the search; the
//                    exception: latency-bound TP collectives (a tiny model), where SP's two
//                    collectives per all-reduce pay two start-ups and the step can be slower.
// Enumeration order (ties go to the earlier candidate): micro_batch ascending, then
// virtual_stages ascending, then recompute none, selective, full, then zero 0, 1.
//
// Choice: every candidate's memory estimate (workload::estimate_memory, no simulation) is
// compared with the rank's HBM share; the candidates that fit are simulated with the analytic
// network model and the one with the smallest step time wins (equal times: the earlier one in
// the enumeration order). A candidate whose compute lower bound (the busiest compute stream's
// total work, which no schedule can beat) exceeds the best step time found so far cannot win
// and is not replayed: this pruning is exact, so it changes the cost, not the choice. When no
// candidate fits, the one whose peak stage needs the fewest bytes over capacity is taken (the
// earlier on ties) and the out-of-memory finding reports it. The final run uses the user's
// network model.
//
// Cost bound: at most kMaxPlanCandidates candidates. When the product above is larger, the
// virtual_stages candidates stop at the largest v that keeps the count within the cap (v = 1
// always stays), i.e. the deeper interleavings are the ones not considered. Interleaving goes
// first: with micro_batch, recompute and zero all unset and dp > 1, v = 1 alone makes up to
// 5 x 3 x 2 = 30 candidates, and no interleaving is considered at all.
#include <cstddef>
#include <optional>
#include <vector>

#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::replay {

inline constexpr std::size_t kMaxPlanCandidates = 32;

struct PlanCandidate {
  workload::TrainingSpec training;        // micro_batch set
  workload::ParallelismSpec parallelism;  // every optional set
};

// Contract: the candidates of the rule above, in its enumeration order, at most
// kMaxPlanCandidates; fields set in `training` and `parallelism` are kept. Never empty. O(count).
std::vector<PlanCandidate> plan_candidates(const workload::ModelSpec& model, const workload::TrainingSpec& training,
                                           const workload::ParallelismSpec& parallelism);

struct PlanSearch {
  workload::ResolvedPlan resolved;  // the chosen plan, and one line per unset field in `choices`
  std::size_t candidates = 0;       // enumerated
  std::size_t fit = 0;              // within the rank's memory capacity
  std::size_t simulated = 0;        // replayed (the rest of those that fit were pruned exactly)
  std::size_t chosen = 0;           // enumeration index of the chosen candidate
  // The chosen candidate's analytic run, when the search replayed it (simulate_step reuses it
  // when the user's network model is analytic too).
  std::optional<StepRun> run;
};

// Contract: applies the rule to `input` (its network model is ignored: the search is analytic).
// Throws InputError, naming the field, for a plan that does not fit the model, batch or
// cluster whatever the candidate. Deterministic. Cost: one memory estimate per candidate plus
// at most one build and replay per candidate that fits; none when there is one candidate.
PlanSearch search_plan(const StepInput& input);

}  // namespace trnsim::replay
