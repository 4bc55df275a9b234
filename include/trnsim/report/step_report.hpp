#pragma once
// StepReport: the figures of one simulated step, derived from a StepRun. Writers (text, JSON)
// print it; they compute nothing of their own.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/cost/compute_model.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/breakdown.hpp"

namespace trnsim::report {

struct Finding {
  std::string rule;     // "out_of_memory", "tp_spans_instances", ...
  std::string message;  // with this run's figures
};

struct StageMemoryReport {
  workload::StageMemory memory;
  double capacity = 0;  // bytes per rank
  bool fits() const { return memory.total() <= capacity; }
};

struct StepReport {
  // What ran.
  std::string model;
  double parameters = 0;
  std::string instance;
  std::string chip;  // the instance's chip name: the hardware family in validation tables
  int instances = 0;
  int chips = 0;
  workload::Plan plan;
  std::string network;  // "analytic" or "flow"
  std::int64_t seq_len = 0, global_batch = 0;
  double step_time_s = 0;
  double sequences_per_s = 0;
  double tokens_per_s = 0;
  // MFU: model FLOPs per step (workload/flops.hpp: 6 x matmul parameters x tokens + attention)
  // over step time x chips x the chip's published dense peak for the training dtype. HFU: the
  // FLOPs the step executes (recompute included) over the same peak.
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
  std::vector<Finding> findings;
  std::vector<std::string> choices;       // how unset ("not published") fields were chosen
  int ranks = 0;
  int simulated_ranks = 0;
  std::size_t tasks = 0;
  std::uint64_t events = 0;
  double build_seconds = 0, simulate_seconds = 0;
};

// Contract: figures from `run`; O(tasks log tasks).
StepReport analyze(const replay::StepInput& input, const replay::StepRun& run);

// Text for the terminal and JSON for tools (schema in README.md, "JSON report").
// wall_times = false leaves out the wall-clock line, for output that must be byte-identical.
std::string format_text(const StepReport& report, bool wall_times = true);
// `experiment`: the fully resolved experiment (config::Experiment::resolved).
nlohmann::json to_json(const StepReport& report, const nlohmann::json& experiment);
inline constexpr int kReportSchemaVersion = 1;

std::string_view engine_name(cost::Engine e);   // "tensor", "vector", "scalar", "hbm"
std::string_view op_class_name(cost::OpClass c);  // "matmul", "attention", ...

}  // namespace trnsim::report
