#pragma once
// StepReport: the figures of one simulated step, derived from a StepRun. The writers
// (report/writers/: text, JSON, CSV, HTML) print it and compute nothing of their own; nothing in
// report/analysis/ includes them.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trnsim/cost/compute_model.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/breakdown.hpp"
#include "trnsim/report/analysis/calibration.hpp"
#include "trnsim/report/analysis/critical_path.hpp"
#include "trnsim/report/analysis/link_utilisation.hpp"

namespace trnsim::report {

// A finding (rules in report/analysis/findings.hpp): what holds the step back, with this run's figures.
struct Finding {
  std::string rule;        // "out_of_memory", "tp_spans_instances", "pipeline_bubble", ...
  std::string message;     // the evidence, with this run's figures
  double seconds = 0;      // step time it costs; 0 where it blocks the run or another finding counts its time
  std::string suggestion;  // the knob that moves it
};

struct StageMemoryReport {
  workload::StageMemory memory;
  double capacity = 0;  // bytes per rank
  bool fits() const { return memory.total() <= capacity; }
};

// The training dtype and the software preset's precision recipes (workload/software.hpp): a
// dtype the software states no recipe for runs the generic one, workload::default_recipe
// (finding generic_precision_recipe, `run --strict`, validate's marks).
struct PrecisionUse {
  std::string software;                   // the preset's name
  workload::Precision dtype = workload::Precision::Bf16;
  std::vector<workload::Precision> stated;  // the dtypes the software has a recipe for, in its order
  bool generic() const;
};

struct StepReport {
  // What ran.
  std::string model;
  double parameters = 0;
  std::string instance;
  std::string chip;  // the instance's chip name: the hardware family in validation tables
  int instances = 0;
  int ultraserver_instances = 1;  // instances per UltraServer (1: none)
  int chips = 0;
  workload::Plan plan;
  hw::AttentionKernel attention = hw::AttentionKernel::Flash;  // as resolved for the run
  PrecisionUse precision;
  std::string network;  // the network model's name (net::to_string)
  std::int64_t seq_len = 0, global_batch = 0;
  // Trainium: the chip's DMA engines move what kernels read from HBM at the lower of the two
  // rates; true when DMA is not above HBM, so that more HBM bandwidth alone buys nothing.
  bool hbm_capped_by_dma = false;
  double step_time_s = 0;
  double sequences_per_s = 0;
  double tokens_per_s = 0;
  // MFU: model FLOPs per step (workload/flops.hpp: 6 x matmul parameters x tokens + attention)
  // over step time x chips x the chip's published dense peak for the training dtype. HFU: the
  // FLOPs the step executes (recompute included; a causal attention kernel's skipped half not
  // counted) over the same peak.
  double model_flops = 0;
  double hardware_flops = 0;
  double peak_flops = 0;  // the whole cluster, FLOP/s
  double mfu = 0;
  double hfu = 0;
  Breakdown breakdown;    // of the bottleneck rank; parts add up to step_time_s
  std::int32_t bottleneck_stage = 0;
  // Busy seconds of the bottleneck rank's engines and by op class (cost model), over the step.
  std::array<double, cost::kEngineCount> engine_busy{};
  std::array<double, cost::kOpClassCount> op_seconds{};
  std::vector<StageMemoryReport> memory;  // per pipeline stage
  // Compute seconds of each pipeline stage over the step (its busiest simulated rank).
  std::vector<double> stage_compute_s;
  // The bottleneck rank's kernels whose HBM time is their largest engine time, by op class:
  // their kernel seconds, and the part of it beyond their next busiest engine (what a faster HBM
  // would save). ideal_compute_s: the rank's tensor-engine FLOPs at its full-tile peak.
  std::array<double, cost::kOpClassCount> hbm_bound_s{};
  std::array<double, cost::kOpClassCount> hbm_excess_s{};
  double ideal_compute_s = 0;
  // Mixture of experts, of the bottleneck rank: seconds in the dispatch and combine all-to-alls
  // (chained on its compute: all exposed), in its expert GEMM tasks (works named "expert_fc..."),
  // the routed load it carries over the mean (workload::expert_load), and the EP groups whose
  // ranks span instances (UltraServers where the instance is part of one): their all-to-alls
  // cross EFA.
  double ep_all_to_all_s = 0;
  // Context parallelism, of the bottleneck rank: seconds its CP K/V exchanges run with no compute
  // of the rank alongside (a ring block's transfer outlasting the block's attention, or the
  // all-gather and reduce-scatter of K/V, which nothing hides).
  double cp_exposed_s = 0;
  double expert_compute_s = 0;
  double expert_load = 1;
  std::int64_t ep_groups_over_efa = 0;
  CriticalPath critical_path;
  LinkUtilisation links;
  std::vector<Finding> findings;          // ranked: out of memory first, then by seconds
  std::vector<std::string> choices;       // how unset ("not published") fields were chosen
  int ranks = 0;
  int simulated_ranks = 0;
  std::size_t tasks = 0;
  std::uint64_t events = 0;
  double build_seconds = 0, simulate_seconds = 0;
  // The figures come from two reduced runs (one of them derived from the other where the network
  // allows) fast-forwarded over the steady state
  // (report/analysis/fast_forward.hpp), not from a replay of every micro-batch.
  bool fast_forward = false;
  // A replayed trace: its file, its nodes and how many kept a measured time (file "": model run).
  replay::StepRun::TraceOrigin trace;
  // The prediction's error bar from the calibration record; set by `trnsim run` (analyze does not
  // know the family), absent elsewhere (sweeps, validate's explanation).
  std::optional<ErrorBar> calibration;
};

struct AnalyzeOptions {
  // Off: StepReport::critical_path stays empty (a sweep ranks plans by figures that do not use it,
  // and tracing it is a tenth of a plan's time).
  bool critical_path = true;
  // The rank whose breakdown, engines, op classes and MoE/CP seconds are reported; unset: the
  // simulated rank with the most compute (step_breakdown). Set by the fast-forward, which picks
  // the bottleneck of the real step from the ranks' extrapolated compute times.
  std::optional<std::int32_t> bottleneck_rank;
};

// Contract: figures from `run`; O(tasks log tasks).
StepReport analyze(const replay::StepInput& input, const replay::StepRun& run, const AnalyzeOptions& options = {});

// Compute seconds of each simulated rank over the step (indexed like StepGraph::simulated_ranks),
// and of each pipeline stage: its busiest simulated rank's. O(tasks).
std::vector<double> rank_compute_seconds(const replay::StepRun& run);
std::vector<double> stage_compute_seconds(const workload::StepGraph& graph, const std::vector<double>& rank_seconds);

std::string_view engine_name(cost::Engine e);   // "tensor", "vector", "scalar", "hbm"
std::string_view op_class_name(cost::OpClass c);  // "matmul", "attention", ...
// Spellings of the experiment file: "gpipe", "1f1b", "1f1b-interleaved"; "none", "selective", "full".
std::string_view schedule_name(workload::PipelineSchedule s);
std::string recompute_name(workload::Recompute r);

}  // namespace trnsim::report
