#pragma once
// Fast-forward over a pipeline's steady state. With M micro-batches per pipeline, a 1F1B step
// (interleaved or not) is warm-up, steady periods and cool-down; each period of d micro-batches
// (d = 1, or pp for 1f1b-interleaved, whose micro-batches go in groups of pp) adds the same tasks
// at the same offsets, so for M large the step time is affine in M. Instead of replaying all M,
// the step is replayed with M1 (the fewest micro-batches with warm-up, a full steady period and
// cool-down, and enough steady ones in M2 to check, below) and M2 = M1 + d;
// P = step(M2) - step(M1) is one period, and
//   step(M) = step(M1) + (M - M1) / d x P, in integer picoseconds.
// The repetition is checked, not assumed: in the M2 replay, every task of the last
// max(2 d, pp + d) steady micro-batches on every simulated rank must have the same durations as
// its counterpart one period later, which must start, become active and end exactly P later; and
// the tasks outside the micro-batches (optimizer, DP buckets) must be as many in both replays.
// Two periods alone are not enough: a steady state may repeat only every few periods
// (llama3.1-405b-trn2u: 1F1B over 16 stages repeats every 14 micro-batches, one
// forward-to-forward step in 14 being 1.4 ms shorter), so the check spans pp shifts at least.
// When it fails, the shortest longer cycle over which M2's steady micro-batches do repeat (a
// multiple of d, steady_cycle) is taken as the period, and the shape, both replays and the check
// are done again with it (max(2 c, pp + c) micro-batches checked for a cycle c), where the plan
// has room (below): the 405B's cycle of 14 needs M1 = 58 and M2 = 72 with its 128 micro-batches,
// M1 = 60 and M2 = 74 with 256. Otherwise the caller falls back to the full replay. The check spans nearly all of
// M2's steady micro-batches (gpt3-175b-a100: [17, 33) of [15, 33)): a steady state still settling
// there fails it, and the plan replays in full. A cycle longer than that whose irregular step
// falls outside the checked micro-batches would not be seen: the tests compare every example and
// validation file with its full replay.
// Every additive figure of the report moves by the same rule (report/analysis/fast_forward.hpp
// extrapolates the StepReport).
// Only M2 is replayed where the network can set calls aside (analytic: its link figures are sums
// over calls; net::NetworkModelInfo::sets_aside) and replicas collapse into one call each (then
// every engine event completes one task or call): M1 is M2 with the period [check_lo, check_lo + d)
// cut out, the first period of the checked micro-batches, which repeat. The M2 replay sets those
// micro-batches aside (their calls' link traffic and their completion events counted apart), and
// derive_first builds M1's graph and gives each of its tasks the span of its counterpart in M2:
// the same micro-batch before the cut, d micro-batches later and P earlier after it (and a task
// outside the micro-batches P earlier when it starts after the cut, unmoved when it ends before).
// The M1 replay showed this for every example and validation file, span for span (the tests
// compare both on each); it is refused, and M1 replayed, where a task outside the micro-batches
// runs during the cut, the members of a call are not all cut out or all moved alike, the graphs
// do not correspond task for task, or the derived timeline breaks what any replay keeps (a
// dependency over before its successor starts, one task at a time on a stream). Then M2 < M is
// room enough, not M1 + M2 < M: llama3.1-405b-trn2u's 128 micro-batches take its cycle of 14
// (M2 = 72 replayed, M1 = 58 derived, 5 periods); where derivation is refused and M1 + M2 >= M,
// the full replay runs instead.
// A failed check costs its replay (the 405B's check of its own period: 49 micro-batches, a third
// of its plan), so where the stage loads foretell a longer cycle, its shape is tried first
// (predicted_cycle): in 1F1B the steady state often repeats every k micro-batches when k stages
// tie for the heaviest compute (llama3.1-405b-trn2u: its 14 stages of 8 layers; 12, 8 and 6 with
// 124, 120 and 118 layers). A guess, not a rule: where communication sets the pace (ZeRO-3's
// gathers, llama2-70b-trn1 with 74-86 layers) the plan may repeat every micro-batch, and then the
// longer shape costs more replay than the schedule's own; where nothing repeats, its failed
// replay replaces the other's. The guess only picks the first shape: the same check decides.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "trnsim/net/fabric.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::replay {

// How a plan is fast-forwarded: replays of `reduced` and `reduced + period` micro-batches per
// pipeline stand for `micro_batches` = reduced + periods x period.
struct FastForwardShape {
  std::int64_t micro_batches = 0;  // of the real plan
  std::int64_t period = 1;         // d: the schedule's own period, or a longer cycle (predicted_cycle, steady_cycle)
  std::int64_t base_period = 1;    // the schedule's: 1, or pp for 1f1b-interleaved
  std::int64_t reduced = 0;        // M1
  std::int64_t periods = 0;        // (M - M1) / d
  // Micro-batches whose every unit, on every stage, is in the steady part of its stage's order
  // (after the warm-up forwards, before the cool-down backwards), in the M2 replay: [lo, hi).
  std::int64_t steady_lo = 0, steady_hi = 0;
  std::int64_t check_lo = 0;  // the checked micro-batches: [check_lo, steady_hi)
};

// Contract: the shape of `resolved` (every field set) on `input`, or nullopt with `why` set when
// fast-forward cannot apply or saves nothing: GPipe (no steady state), fewer micro-batches than
// the reduced replays take (M2 >= M where M1 is derived, M1 + M2 >= M where it is replayed). M1
// is the fewest micro-batches (keeping M's residue modulo d) with a steady period whose M2 has
// max(2 d, pp + d) steady micro-batches to check.
// O(pp x M1 x v) schedule units per candidate M1.
// `cycle`, when not 0, is the period to use instead of the schedule's (a multiple of it, larger:
// what steady_cycle found; InternalError otherwise), d above.
std::optional<FastForwardShape> fast_forward_shape(const StepInput& input, const workload::ResolvedPlan& resolved,
                                                   std::string* why = nullptr, std::int64_t cycle = 0);

// `resolved` with `micro_batches` micro-batches per pipeline (global_batch = micro_batches x dp x
// micro_batch); every other field kept.
workload::ResolvedPlan with_micro_batches(const workload::ResolvedPlan& resolved, std::int64_t micro_batches);

// What a derived M1 needs of its graph: every task and its dependency edges (Full: M1 is built,
// then derive_first), or the tasks alone, enough for every figure of the report but the critical
// path (TasksOnly: cut_first, no build; where it refuses, Full's way is taken).
enum class FirstGraph : std::uint8_t { Full, TasksOnly };

// The two reduced runs (M2 replayed, M1 replayed or derived) and what they say of the real step.
struct FastForwardRuns {
  FastForwardShape shape;
  StepRun first, second;  // M1 and M2 micro-batches
  bool derived = false;   // first was derived from second (derive_first, cut_first), not replayed
  FirstGraph first_graph = FirstGraph::Full;  // TasksOnly: first came from cut_first
  sim::Time period;       // P
  sim::Time step_time;    // step(M), exact
  // Micro-batches replayed in all, a replay that failed its check included (M2, plus M1 where
  // not derived): what the fast-forward cost, against `shape.micro_batches` for the full replay.
  std::int64_t replayed = 0;
};

// Contract: k >= 2 where the plan is 1F1B (or 1f1b-interleaved with one virtual stage: base
// period 1) and exactly k of its pp > k stages, among those holding the most layers, tie for the
// heaviest compute per micro-batch (the sum of the works' durations of one
// micro-batch's compute tasks on the stage's busiest simulated rank, equal to the bit: stages
// holding the same layers sum the same works); else 0. The cycle fast_forward_runs tries first
// for `shape` (a shape of the schedule's own period), a guess its check confirms or refuses.
// Only `shape.base_period` is read. Where two stages or more, not all, hold the most layers (by
// workload/plan.hpp's split rule; else 0 in O(pp): with layers alike no stage can tie then; with
// a mixture of experts' dense layers a tie elsewhere goes unseen, and the schedule's own shape is
// tried), builds and prices a one-micro-batch step: O(tasks of one micro-batch) and the works'
// pricing.
std::int64_t predicted_cycle(const StepInput& input, const workload::ResolvedPlan& resolved,
                             const FastForwardShape& shape);

// Contract: the two replays of `shape` checked as above (M1 derived where it can be, else
// replayed), or nullopt when the repetition is not exact (or the extrapolated step overflows the
// clock): the caller replays the real plan. Throws what prepare_step / replay_step throw, and the
// real step's memory guard (step_size.hpp) first, since a failed check replays it. The shape
// tried first is `shape`, or, for a shape of the schedule's own period, that of its
// predicted_cycle where that has room. A failed check is followed by at most one more shape: that
// of the cycle its M2 repeats over (steady_cycle), where it differs from the period tried and the
// plan has room (the result's `shape` is then that one; the failed replay is released before, and
// its wall time added to the second run's). Cost: predicted_cycle's (for a shape of the
// schedule's period), the M2 replay, and M1's build (and replay, where not derived) only when
// M2's steady state repeats, plus O(tasks of M2); after a failed check, once more the same.
std::optional<FastForwardRuns> fast_forward_runs(const StepInput& input, const workload::ResolvedPlan& resolved,
                                                 const FastForwardShape& shape,
                                                 std::shared_ptr<net::Fabric> fabric = {},
                                                 FirstGraph graph = FirstGraph::Full);

// Contract: fills first.timeline and first.links (M1 = shape.reduced micro-batches, prepared:
// graph built, not replayed) from `second` (M2, replayed with micro-batches [check_lo, check_lo +
// period) set aside, StepRun::aside; its checked micro-batches repeat with period P, `period`)
// as described above and returns true, moving second.aside.links_without into first.links;
// false, leaving both as they were, where the replay could not set them aside, a task outside
// the micro-batches runs during them, a call's members would move apart, the graphs' tasks do not
// correspond, a dependency would end after its successor starts, or the derived step is not M2's
// less P. O(tasks + edges).
bool derive_first(const FastForwardShape& shape, StepRun& first, StepRun& second, sim::Time period);

// Contract: M1's run as derive_first derives it, without building M1: M2's tasks less the
// micro-batches cut out, later micro-batches numbered d lower, each with the span derive_first
// gives its counterpart, listed rank by rank and stream by stream in the order each stream runs
// them (as a build lists a stream's tasks); no dependency edges (Task::deps and successors empty),
// so no critical path; the works, collectives and groups M2's; the plan, memory estimate and
// resolved fields M1's; second.aside.links_without moved into its links. nullopt where
// derive_first refuses for the replay or the cut, or two tasks of a stream would overlap (not the
// graphs' correspondence: there is no M1 graph to compare; the tests compare both ways with M1
// replayed). O(tasks of M2) and a copy of M2's works and groups.
std::optional<StepRun> cut_first(const StepInput& input, const FastForwardShape& shape, StepRun& second,
                                 sim::Time period);

// Contract: the one shift P that every task of the checked micro-batches of `second`
// (shape.reduced + shape.period micro-batches) has against its counterpart one period later, in
// start, active and end, or nullopt. O(tasks).
std::optional<sim::Time> steady_period(const FastForwardShape& shape, const StepRun& second);

// Contract: the shortest cycle longer than the schedule's period (a multiple of it) over which
// the tasks of all M2's steady micro-batches [steady_lo, steady_hi) repeat, with at least one
// period of them compared; nullopt when none does. For a `second` whose check failed (with the
// schedule's period, or a cycle's): the cycle to try instead (fast_forward_runs does, once). O(tasks) per candidate.
std::optional<std::int64_t> steady_cycle(const FastForwardShape& shape, const StepRun& second);

// Contract: whether `second` repeats with period `period` (steady_period), `period` is the
// difference of the two step times, and `second` has as many tasks outside the micro-batches as
// `first`. O(tasks).
bool steady_state_repeats(const FastForwardShape& shape, const StepRun& first, const StepRun& second, sim::Time period);

// a + k (b - a) for figures of the M1 (a) and M2 (b) replays: the value at M1 + k periods.
double extrapolate(double a, double b, std::int64_t k);
std::int64_t extrapolate(std::int64_t a, std::int64_t b, std::int64_t k);
std::uint64_t extrapolate(std::uint64_t a, std::uint64_t b, std::int64_t k);

// The step time of `resolved` on `input` (seconds): fast-forwarded when the shape applies and the
// check passes, else the full replay. `fast_forwarded`, when given, says which.
double step_time_seconds(const StepInput& input, const workload::ResolvedPlan& resolved, bool fast_forward,
                         std::shared_ptr<net::Fabric> fabric = {}, bool* fast_forwarded = nullptr);

}  // namespace trnsim::replay
