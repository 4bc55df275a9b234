#pragma once
// `trnsim sweep`: the product of plan values (and of --vary values of any experiment field),
// each plan checked, sized against memory and, when it runs, simulated and analysed. The layer
// above config: it needs experiment parsing (--vary), the replay and the report's analysis.
//
// Enumeration (the order of PlanPoint::index, of the CSV rows and of shards): --vary axes
// outermost, in the order given, each in its values' order; then tp, pp, dp, micro_batch,
// virtual_stages, recompute, zero, sequence_parallel, each in the order given. An axis that is not
// given has one value: the experiment's (null stays null and the plan rule fills it,
// replay/plan_rule.hpp), except dp, which is then derived: the cluster's ranks / (tp x pp x cp),
// cp the experiment's (or a --vary value's; `trnsim sweep --cp` is a --vary axis on it).
//
// Each point ends in one of three states, checked in this order:
//   invalid        the plan cannot run the model on the batch and cluster (workload::check_plan,
//                  the plan rule's kv-heads check) or tp x pp (x cp) does not divide the ranks (dp
//                  derived): counted by the rule broken (InputError::reason);
//   out_of_memory  the resolved plan's memory estimate exceeds a rank's HBM share in some stage:
//                  not simulated;
//   simulated      built, replayed and analysed (step time, throughput, MFU, breakdown, findings);
//   pruned         (--search only) its compute lower bound exceeds the keep-th fastest step time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/config/experiment.hpp"
#include "trnsim/report/analysis/breakdown.hpp"

namespace trnsim::explore {

// --vary PATH=V1,V2,...: the values as `--set` would take them (JSON when they parse, else strings).
struct VaryAxis {
  std::string path;
  std::vector<std::string> values;
};

// The lists given on the command line; an empty list: the axis is not swept.
struct SweepAxes {
  std::vector<std::int64_t> tp, pp, dp, micro_batch, virtual_stages, zero;
  std::vector<workload::Recompute> recompute;
  std::vector<bool> sequence_parallel;
  std::vector<VaryAxis> vary;
  std::vector<std::string> overrides;  // --set PATH=VALUE: every point, before the --vary values
};

// One plan of the product for one --vary combination: its training and parallelism, unset fields
// as the experiment leaves them (the plan rule fills them); dp unset: derived.
struct PlanPoint {
  std::size_t index = 0;  // in the combination's product
  workload::TrainingSpec training;
  workload::ParallelismSpec parallelism;
  std::optional<std::int64_t> dp;
};

enum class PlanStatus : std::uint8_t { Simulated, OutOfMemory, Invalid, Pruned };
std::string_view status_name(PlanStatus s);  // "simulated", "out_of_memory", "invalid", "pruned"

// What one point gives. The plan fields are the resolved ones (every field set) for simulated and
// out-of-memory points, the enumerated ones (unset fields absent) for invalid points.
struct PlanOutcome {
  std::size_t index = 0;
  std::vector<std::string> vary;  // the --vary values, as given
  PlanStatus status = PlanStatus::Invalid;
  std::string reason;  // invalid: the rule broken; out_of_memory: the stage that does not fit
  std::string detail;  // invalid: the full message
  std::optional<std::int64_t> tp, pp, dp, micro_batch, virtual_stages, zero;
  std::optional<std::string> schedule, recompute;
  std::optional<bool> sequence_parallel;
  double peak_memory_bytes = 0, capacity_bytes = 0;  // out_of_memory, pruned and simulated
  double lower_bound_s = 0;  // --search: the compute lower bound (pruned and simulated; else 0)
  // simulated:
  double step_time_s = 0, tokens_per_s = 0, mfu = 0;
  std::array<double, report::kPartCount> breakdown{};
  std::string finding_rule, finding;  // the first finding ("" when none)
};

struct SweepOptions {
  int threads = 1;        // >= 1; the outcomes do not depend on it
  bool search = false;    // --search: search_points, pruned by bound (below); not with shards
  std::size_t keep = 10;  // --search: the ranking that must be exact (the --top K fastest)
  int shard = 0, shards = 1;  // evaluate the points whose index % shards == shard
  // Called from the calling thread about every 200 ms while points run: (points done, points of
  // this run); with --search, while the lower bounds are computed. May be empty.
  std::function<void(std::size_t, std::size_t)> progress;
  // --max-memory (0: no limit, --force): the sweep stops with an InputError before simulating when
  // its SweepMemory estimate exceeds this.
  double max_memory_bytes = 0;
  // Fast-forward each plan over its pipeline's steady state where exact (evaluate_plan);
  // --no-fast-forward replays every micro-batch.
  bool fast_forward = true;
};

// The resource guard of a sweep (and of sensitivity, which runs on the same pool): what simulating
// its plans will hold at most, estimated before any is simulated. Each worker thread holds one
// plan's step at a time (replay::estimate_step_size: its tasks, graph, engine events, topology and
// routes), so the peak is the largest plan's step times the plans simulated at once; besides, the
// run keeps every point's outcome (and, with --search, every admitted plan) until it ends.
struct SweepMemory {
  double largest_plan_bytes = 0, largest_plan_tasks = 0;  // 0: no plan to simulate
  std::string largest_plan;  // "tp 2, pp 1, dp 1, micro-batch 1" (for the message)
  std::size_t at_once = 0;   // min(threads, plans to simulate)
  double held_bytes = 0;     // outcomes and plans kept for the whole run, all points
  double total() const { return largest_plan_bytes * static_cast<double>(at_once) + held_bytes; }
};

// Contract: throws InputError "WHAT would need about T GB of memory: ..." with the estimate's parts,
// the limit, `--max-memory` and `--force` when memory.total() exceeds `max_bytes` (0: no limit).
void check_sweep_memory(const SweepMemory& memory, double max_bytes, const std::string& what);

// One plan's step, as replay::estimate_step_size sizes it.
struct PlanSize {
  double bytes = 0, tasks = 0;
  std::string plan;  // "tp 2, pp 1, dp 1, micro-batch 1"
};

// Contract: the PlanSize of the point when it would be simulated (valid and fits a rank's memory),
// else nullopt. Cost: evaluate_plan's checks, no build.
std::optional<PlanSize> point_step_size(const config::Experiment& ex, const PlanPoint& point);

// Contract: the SweepMemory of n points, `size_of(k)` sizing point k (nullopt: not simulated), on
// `threads` threads (size_of runs on them), each point keeping held_bytes_per_point(search).
SweepMemory sweep_memory(std::size_t n, int threads, bool search, const std::function<std::optional<PlanSize>(std::size_t)>& size_of);

// Bytes a run keeps per point until it ends (its outcome, with room for its texts), and per point
// admitted for a --search (its inputs: presets, plan); erring high.
double held_bytes_per_point(bool search);

// What the sweep ran on: enough to print the same header from merged shards.
struct SweepSummary {
  std::string experiment;  // the file as given
  std::string title;       // "llama3.1-70b on 64 x trn2.48xlarge (4,096 ranks), analytic network"
  std::vector<std::string> vary_paths;
  std::size_t points = 0;  // enumerated, all shards
  int shard = 0, shards = 1;
  bool search = false;
  std::size_t keep = 0;  // --search: the K of the exact top-K ranking (0 for a sweep of lists)
  // What defines the sweep: the axes, --set and --vary values, --search, and a digest of the
  // experiment document. Shards merge only when theirs are equal.
  nlohmann::json definition;
};

struct SweepResult {
  SweepSummary summary;
  std::vector<PlanOutcome> outcomes;  // this shard's points, in index order
};

// Contract: the plan product for one --vary combination, parsed as `ex` (the vary axes are not
// part of it), in the enumeration order above. Throws InputError naming the option when a value
// is out of range (tp < 1, zero not 0 or 1, ...). O(product).
std::vector<PlanPoint> plan_points(const config::Experiment& ex, const SweepAxes& axes);
// The size of that product: the same for every combination.
std::size_t plans_per_combination(const SweepAxes& axes);

// --search: every plan of the cluster instead of a product of lists. An axis given as a list keeps
// its list; the others take every value the cluster and batch allow, dependent on the values
// before them: tp every divisor of the ranks; pp every divisor of ranks / tp up to the layers;
// dp derived; micro_batch every divisor of the per-replica batch (global_batch / dp);
// virtual_stages 1, and every v >= 2 that Megatron-LM's interleaving allows (pp > 1, v dividing
// layers / pp, the micro-batches per pipeline a multiple of pp); recompute none, selective,
// full; zero 0, and 1 when dp > 1; sequence parallelism the experiment's. Order: the same
// nesting as plan_points. Invalid plans are still listed: a tp that does not divide the heads,
// and a given tp that does not divide the ranks (as one point, pp 1 unless pp is given). A
// schedule the experiment sets (gpipe) is kept for v = 1.
//
// The search ranks exactly: after the checks and the memory estimate, each plan that fits gets a
// lower bound of its step time (its busiest rank's compute, back to back at full speed: one
// graph build and pricing, no replay); plans are replayed in ascending bound order until the
// next bound exceeds the keep-th fastest step time found, and the rest are `pruned`: none of
// them can be among the keep fastest.
std::vector<PlanPoint> search_points(const config::Experiment& ex, const SweepAxes& axes);

// "llama3.1-70b on 64 x trn2.48xlarge (4,096 ranks), analytic network": what a sweep runs on.
std::string sweep_title(const config::Experiment& ex);

// Contract: one plan of `ex`'s model, batch and cluster, taken through the states above (never
// pruned); the outcome's index and vary values are the caller's to fill. A plan that cannot run
// is an outcome, not an error. Cost: a memory estimate, and a build, replay and analysis when it
// fits.
// `fast_forward`: the replay fast-forwarded over the pipeline's steady state where that is exact
// (report/analysis/fast_forward.hpp), the same figures for less time; off: every micro-batch.
PlanOutcome evaluate_plan(const config::Experiment& ex, const PlanPoint& point, bool fast_forward = true);

// Contract: runs body(k) once for every k in [0, n) on min(threads, n) threads; `progress` (may
// be empty) as SweepOptions::progress, from the calling thread. When body writes only slot k of
// a presized vector, the results do not depend on the thread count. The first exception a body
// throws is rethrown here, after every thread has stopped.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t)>& progress,
                  const std::function<void(std::size_t)>& body);
// The same with body(k, worker): worker in [0, min(threads, n)) names the thread that runs k, for
// state each thread keeps for itself (a sweep's fabrics).
void parallel_for_workers(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t)>& progress,
                          const std::function<void(std::size_t, std::size_t)>& body);

// Contract: runs the shard's points of `document` (an experiment file's JSON, `file` names it)
// swept over `axes`. Throws InputError for bad input that concerns the whole sweep (an
// unreadable experiment, a --vary path or value the experiment refuses); a plan that cannot run
// is an outcome, not an error. Deterministic: the same outcomes for any thread count. Cost: one
// parse per --vary combination, one memory estimate per valid point, one build, replay and
// analysis per point that fits; with a memory limit, one more check of every point (SweepMemory)
// before any is simulated: InputError when the estimate exceeds it.
SweepResult run_sweep(const nlohmann::json& document, const std::string& file, const SweepAxes& axes,
                      const SweepOptions& options);

}  // namespace trnsim::explore
