#pragma once
// The band of predictions an experiment's unpublished fields allow (`trnsim validate`): the
// fastest and the slowest predicted step time over the plans its null fields could stand for,
// among those that fit in memory. A separate question from the rule that fills those fields for
// the prediction (plan_rule.hpp), which it never changes. The band is what the unknowns allow,
// and it always holds the plan the prediction ran: each null field's candidates below are joined
// by the value the rule gave the prediction (a software default or recipe outside the list, such
// as recompute selective-op or zero 3), so the prediction (with the analytic network model) lies
// in the band whenever its plan fits in memory. (The software still decides how each plan runs:
// precision, kernels, overlap; and a null training.attention takes the rule's value, the
// software's kernel, not a band field.)
//
// Candidates, per field the experiment left null (a set field keeps its one value), each list
// then joined by the prediction's value when it is not in it:
//   micro_batch       1, 2, 4, 8, 16: those that divide the per-replica batch global_batch / dp.
//   virtual_stages    1, and the v >= 2 that Megatron-LM's interleaving allows: pp > 1, the layers
//                     split evenly over the pp stages and each stage's layers evenly over its v
//                     chunks (v divides layers / pp), and the micro-batches per pipeline
//                     (global_batch / (dp x micro_batch)) a multiple of pp. Only 1 when the file
//                     sets schedule gpipe or 1f1b; only the v >= 2 when it sets 1f1b-interleaved
//                     (a micro_batch that allows none is not a candidate then), and v = 2 when the
//                     layers do not split evenly over pp (trnsim's uneven split, the rule's value).
//   schedule          follows virtual_stages: 1f1b for v = 1, 1f1b-interleaved above.
//   recompute         none, selective, full.
//   zero              0, and 1 when dp > 1 (with dp = 1 there is nothing to shard).
//   sequence_parallel off, and on when tp > 1 and tp divides seq_len.
// Enumeration order (ties go to the earlier candidate): micro_batch ascending, virtual_stages
// ascending, recompute none, selective, full, zero 0, 1, sequence_parallel off, on, the
// prediction's value of each last. When the enumeration, or the cap below, leaves out the
// prediction's whole plan (a software schedule, a cut micro_batch or v), it is appended.
//
// Every candidate's memory estimate (workload::estimate_memory) is compared with the rank's HBM
// share; every candidate that fits is built and replayed with the analytic network model. One
// candidate alone (every band field set, or null with one possible value) is the plan that ran:
// it is replayed whether or not its estimate fits, so the band of a fully stated file is its
// prediction (with the analytic network model) even where the memory estimate is over capacity.
// No pruning: a candidate may be skipped only when it can be neither the fastest nor the slowest.
// The compute lower bound (the busiest compute stream's total) proves the first but says nothing
// of the second, and no exact upper bound of the replay is both cheap and tight enough to prune:
// the critical path with the longest task durations is not one, because a stream runs its ready
// tasks in the order they became ready and compute slows while its rank communicates, so a
// longer task can reorder a stream and shorten the step (a list-scheduling anomaly). So
// `simulated` equals `fit` (or 1, above).
//
// Cost bound: at most kMaxBandCandidates candidates, plus the prediction's plan appended as above.
// When the product above is larger, the virtual_stages candidates stop at the largest v that
// keeps the count within the cap (each micro_batch keeps its smallest v): the deeper
// interleavings go first. When v alone is still too
// many, the largest micro_batch values go next: with micro_batch, recompute, zero and
// sequence_parallel all null, dp > 1 and tp > 1, micro_batch 1, 2, 4, 8, 16 at v = 1 make 60
// candidates, and 16 is left out (48). Each kept candidate costs one memory estimate and, when it
// fits, one graph build and one replay.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::replay {

inline constexpr std::size_t kMaxBandCandidates = 48;

struct PlanCandidate {
  workload::TrainingSpec training;        // micro_batch set
  workload::ParallelismSpec parallelism;  // every optional set
};

// Contract: the candidates above, in their enumeration order, at most kMaxBandCandidates (+ 1
// with `own`); fields set in `training` and `parallelism` are kept. `own`, when given, is the
// prediction's resolved plan (replay::resolve_plan): its band fields are always one candidate.
// Empty only without `own` when the set fields admit no candidate (a set interleaving no
// micro_batch can run). O(count).
std::vector<PlanCandidate> band_candidates(const workload::ModelSpec& model, const workload::TrainingSpec& training,
                                           const workload::ParallelismSpec& parallelism,
                                           const PlanCandidate* own = nullptr);

struct PlanBand {
  std::size_t candidates = 0;  // enumerated
  std::size_t fit = 0;         // within the rank's memory capacity
  std::size_t simulated = 0;   // replayed (or the prediction's): every one that fits, or the one
  double fastest_s = 0, slowest_s = 0;            // step times (s); 0 when nothing was replayed
  std::optional<PlanCandidate> fastest, slowest;  // their plans (the earlier candidate on ties)
  bool empty() const { return simulated == 0; }
};

// Contract: the band of `input` (its network model is ignored: the band is analytic). Throws
// InputError, naming the field, for a plan that does not fit the model, batch or cluster whatever
// the candidate. Deterministic. Cost: as above; with every band field set, one memory estimate
// and one replay (fastest = slowest = the prediction with the analytic network model).
// `prediction`, when given, is simulate_step(input): when input's network model is analytic, the
// candidate with its plan takes its step time instead of a replay (the replay would be the same:
// same graph, same durations, same network model), which saves the costliest replay of a file
// whose unknowns mostly do not fit. The result is the same with or without it. The candidate with
// the prediction's band fields runs the prediction's resolved plan (its FSDP prefetch depth too).
// `fast_forward`: each candidate's replay fast-forwarded over the pipeline's steady state where
// that is exact (replay/fast_forward.hpp: the same step time in picoseconds); off: every micro-batch.
PlanBand plan_band(const StepInput& input, const StepRun* prediction = nullptr, bool fast_forward = true);

// One line naming the plan's values of the band fields:
// "micro_batch 2, virtual_stages 1 (1f1b), recompute none, zero 1, sequence_parallel on".
std::string describe(const PlanCandidate& candidate);

}  // namespace trnsim::replay
