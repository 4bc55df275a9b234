// trnsim run EXPERIMENT.json: simulate one optimizer step and report it.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "command.hpp"
#include "output_file.hpp"
#include "trnsim/config/calibration_record.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/prediction_family.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/config/trace_input.hpp"
#include "trnsim/error.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/replay/trace_replay.hpp"
#include "trnsim/report/analysis/fast_forward.hpp"
#include "trnsim/report/analysis/step_report.hpp"
#include "trnsim/report/writers/chrome_trace.hpp"
#include "trnsim/report/writers/csv_report.hpp"
#include "trnsim/report/writers/html_report.hpp"
#include "trnsim/report/writers/json_report.hpp"
#include "trnsim/report/writers/text_report.hpp"

namespace trnsim::cli {

namespace {

struct RunOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  std::string network;
  std::string json_path;
  std::string trace_path, trace_ranks;
  bool trace_ranks_given = false;
  std::string csv_path;
  std::string html_path;
  bool dry_run = false;
  bool strict = false;
  bool fast_forward = true;
  std::string scale_durations;
  MemoryLimitOption memory;
};

// The step of the experiment's workload: built from its model, or read from its trace.
replay::StepRun simulate_workload(const RunOptions& o, const config::Experiment& ex, replay::StepInput& input) {
  if (ex.trace.empty()) {
    if (!o.scale_durations.empty())
      throw InputError(fmt::format("--scale-durations: only for an experiment whose workload is a trace; {} builds its step "
                                   "from a model",
                                   o.experiment));
    return replay::simulate_step(input);
  }
  const replay::DurationScale scale =
      o.scale_durations.empty() ? replay::DurationScale{} : replay::parse_duration_scale(o.scale_durations);
  config::TraceInput t = config::trace_input(ex);
  const double max_memory_bytes = input.max_memory_bytes;
  input = std::move(t.input);
  input.max_memory_bytes = max_memory_bytes;
  if (!t.trace.ignored.empty()) {
    spdlog::warn("{}: {} nodes ignored or rejected (-v lists them)", t.trace.file, t.trace.ignored.size());
    for (const std::string& line : t.trace.ignored) spdlog::debug("{}: {}", t.trace.file, line);
  }
  return replay::simulate_trace(input, std::move(t.trace), scale);
}

// --trace F: the Chrome trace of the step (README.md, "Open the trace in Perfetto").
void write_trace(const RunOptions& o, const report::TraceOptions& trace, const replay::StepInput& input,
                 const replay::StepRun& step) {
  write_file(o.trace_path, [&](std::ostream& out) { report::write_chrome_trace(out, input, step, trace); });
}

// simulate(): its input errors (a plan that cannot run, the guards' estimates) naming the
// experiment and its overrides as the config layer's errors do.
template <class Simulate>
auto labelled(const RunOptions& o, Simulate&& simulate) {
  try {
    return simulate();
  } catch (const InputError& e) {
    const std::string what = e.what();
    if (what.rfind(o.experiment, 0) == 0) throw;
    std::string label = o.experiment;
    for (std::size_t i = 0; i < o.overrides.size(); ++i)
      label += (i == 0 ? " (with --set " : ", --set ") + o.overrides[i];
    if (!o.overrides.empty()) label += ")";
    throw InputError(fmt::format("{}: {}", label, what), e.reason());
  }
}

// The prediction's error bar: its family against the calibration record of the configuration
// directory (none there: the bar says so; a record it cannot read: InputError naming it).
report::ErrorBar error_bar(const config::Experiment& ex) {
  const std::optional<report::CalibrationRecord> record =
      config::read_calibration_record(config::calibration_record_path());
  return report::error_bar(config::prediction_family(ex).name(), record ? &*record : nullptr);
}

// The outputs made from the report alone, then the text (files first: a run that cannot write what
// was asked for fails before printing results).
int report_step(const RunOptions& o, const config::Experiment& ex, const report::StepReport& rep) {
  if (!o.json_path.empty()) write_file(o.json_path, report::to_json(rep, ex.resolved).dump(2) + "\n");
  if (!o.csv_path.empty()) report::append_csv(o.csv_path, rep, {o.experiment, ex.id.empty() ? ex.name : ex.id});
  fmt::print("{}", report::format_text(rep));
  const bool oom = std::any_of(rep.memory.begin(), rep.memory.end(), [](const auto& m) { return !m.fits(); });
  return o.strict && (oom || rep.precision.generic()) ? 1 : 0;
}

int run(const RunOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.network.empty()) overrides.push_back("network.model=" + o.network);
  const config::Experiment ex = config::load_experiment(o.experiment, overrides);
  if (o.dry_run) {
    fmt::print("{}\n", ex.resolved.dump(2));
    return 0;
  }
  check_output_paths({o.json_path, o.html_path, o.trace_path});
  const report::ErrorBar bar = error_bar(ex);
  if (!o.csv_path.empty()) report::check_append_csv(o.csv_path);
  replay::StepInput input = config::step_input(ex);
  input.max_memory_bytes = o.memory.bytes();
  report::TraceOptions trace;
  if (o.trace_ranks_given) {
    trace.ranks = report::parse_rank_list(o.trace_ranks, static_cast<std::int32_t>(input.cluster.ranks()));
  }
  // Fast-forward (unless --no-fast-forward): a model's step without per-task outputs (--trace and
  // --html draw every task).
  if (o.fast_forward && ex.trace.empty() && o.scale_durations.empty() && o.trace_path.empty() && o.html_path.empty()) {
    report::StepReport rep = labelled(o, [&] {
      return report::simulate_and_analyze(input, replay::resolve_plan(input), true);
    });
    rep.calibration = bar;
    return report_step(o, ex, rep);
  }
  const replay::StepRun step = labelled(o, [&] { return simulate_workload(o, ex, input); });
  report::StepReport rep = report::analyze(input, step);
  rep.calibration = bar;
  if (!o.trace_path.empty()) write_trace(o, trace, input, step);
  if (!o.html_path.empty()) write_file(o.html_path, report::format_html(input, step, rep));
  return report_step(o, ex, rep);
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one training step of an experiment");
  cmd->add_option("experiment", options->experiment, "Experiment file (JSON)")->required();
  cmd->add_option("--set", options->overrides,
                  "Override a value of the resolved experiment: PATH=VALUE, e.g. parallelism.tp=16 "
                  "(repeatable, all applied before the experiment is checked; VALUE is JSON when it parses, else a "
                  "string)");
  cmd->add_option("--network", options->network, network_model_help())->check(CLI::IsMember(network_model_choices()));
  cmd->add_option("--json", options->json_path, "Also write the report as JSON to this file");
  CLI::Option* trace = cmd->add_option(
      "--trace", options->trace_path, "Also write a Chrome trace of the step to this file (open in ui.perfetto.dev)");
  cmd->add_option("--trace-ranks", options->trace_ranks,
                  "Ranks to trace, e.g. 0-7,128 (default: one rank per pipeline stage; a rank that was not "
                  "simulated is shown as its stage's representative)")
      ->needs(trace);
  cmd->add_option("--csv", options->csv_path,
                  "Append one row of headline figures to this CSV file (header written when the file is new)");
  cmd->add_option("--html", options->html_path,
                  "Also write the report as one self-contained HTML page (charts, pipeline timeline) to this file");
  cmd->add_option("--scale-durations", options->scale_durations,
                  "For a trace (\"workload\": {\"trace\": F}): multiply its measured compute durations, e.g. "
                  "compute=0.5 (FLOP/byte nodes are priced on the cluster's hardware either way)");
  cmd->add_flag("--strict", options->strict,
                "Exit 1 when a rank runs out of memory, or when the software has no precision recipe for "
                "training.dtype (the generic recipe ran)");
  cmd->add_flag("--fast-forward,!--no-fast-forward", options->fast_forward,
                "Fast-forward over the pipeline's steady state (the default): two reduced steps (on the "
                "analytic network one replayed, the other derived from it) extrapolated where the repetition is checked exact (the same step time in picoseconds, figures within "
                "rounding; results.fast_forward says whether it applied); --no-fast-forward replays every "
                "micro-batch. Always every micro-batch with --trace, --html and trace workloads");
  cmd->add_flag("--dry-run", options->dry_run, "Print the resolved experiment as JSON and stop");
  options->memory.add_to(*cmd);
  cmd->callback([&action, options, cmd] {
    options->trace_ranks_given = cmd->count("--trace-ranks") > 0;
    action = [options] { return run(*options); };
  });
}

}  // namespace trnsim::cli
