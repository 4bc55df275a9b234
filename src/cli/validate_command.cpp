// trnsim validate FILES_OR_DIRS...: every experiment with a measured step time, simulated as it
// is, against its measurement and the band of predictions its null fields allow; error
// statistics overall, per chip and per prediction family (with the calibration record's
// leave-one-out and leave-one-family-out errors); marks for what a prediction stands for (a plan
// estimated out of memory, a generic precision recipe).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "output_file.hpp"
#include "trnsim/config/calibration_record.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/prediction_family.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/error.hpp"
#include "trnsim/replay/plan_band.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/step_report.hpp"
#include "trnsim/report/analysis/validation.hpp"
#include "trnsim/report/writers/text_report.hpp"
#include "trnsim/report/writers/validation_report.hpp"

namespace trnsim::cli {

namespace {

namespace fs = std::filesystem;

struct ValidateOptions {
  std::vector<std::string> inputs;
  std::string csv_path;
  std::string explain;
  double max_mean_error_pct = -1;   // < 0: no threshold
  double max_worst_error_pct = -1;
  bool no_fast_forward = false;
  MemoryLimitOption memory;
};

// Files in argument order; a directory contributes its *.json files in sorted name order.
std::vector<std::string> experiment_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> found;
      fs::directory_iterator it(input, ec);
      for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::error_code file_ec;
        if (it->path().extension() == ".json" && it->is_regular_file(file_ec)) found.push_back(it->path().string());
      }
      if (ec) throw InputError(fmt::format("{}: cannot read this directory: {}", input, ec.message()));
      if (found.empty()) throw InputError(fmt::format("{}: no *.json experiment files in this directory", input));
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(input, ec) || fs::is_fifo(input, ec)) {
      files.push_back(input);  // a pipe too (the shell's <(...)), as every command reads one
    } else if (fs::exists(input, ec)) {
      throw InputError(fmt::format("{}: expected an experiment file or a directory of them, found a device", input));
    } else {
      throw InputError(fmt::format("{}: no such file or directory", input));
    }
  }
  return files;
}

// The experiment's id, else its file name without extension.
std::string experiment_id(const config::Experiment& ex) {
  return ex.id.empty() ? fs::path(ex.file).stem().string() : ex.id;
}

// The band of an --explain report: its bounds with their plans, and what it cost.
std::string band_lines(const replay::PlanBand& band, const report::ValidationRow& row) {
  std::string out = fmt::format("band       {} candidate{} over the null fields, {} fit in memory, {} replayed\n",
                                band.candidates, band.candidates == 1 ? "" : "s", band.fit, band.simulated);
  if (band.empty()) return out + "           no band: no candidate fits in memory\n";
  out += fmt::format("           fastest {:.4f} s ({})\n           slowest {:.4f} s ({})\n", band.fastest_s,
                     replay::describe(*band.fastest), band.slowest_s, replay::describe(*band.slowest));
  return out + fmt::format("           measured {} the band\n", row.band_position());
}

int validate(const ValidateOptions& o) {
  check_output_paths({o.csv_path});
  // Read and check every file before simulating any: bad input fails fast.
  std::vector<config::Experiment> experiments;
  for (const std::string& file : experiment_files(o.inputs)) {
    config::Experiment ex = config::load_experiment(file);
    if (!ex.measured) {
      throw InputError(fmt::format("{}: /measured: missing (validate needs measured.step_time_s, the measured "
                                   "seconds per step)",
                                   file));
    }
    experiments.push_back(std::move(ex));
  }
  // The calibration record: read before anything is simulated, as the files are.
  const std::optional<report::CalibrationRecord> record =
      config::read_calibration_record(config::calibration_record_path());
  const report::CalibrationRecord* const record_ptr = record ? &*record : nullptr;
  const auto explained = std::find_if(experiments.begin(), experiments.end(),
                                      [&](const config::Experiment& ex) { return experiment_id(ex) == o.explain; });
  if (!o.explain.empty() && explained == experiments.end()) {
    throw InputError(fmt::format("--explain {}: no experiment with this id among the files given", o.explain));
  }

  std::vector<report::ValidationRow> rows;
  std::string explanation;
  for (auto ex_it = experiments.begin(); ex_it != experiments.end(); ++ex_it) {
    const config::Experiment& ex = *ex_it;
    replay::StepInput input = config::step_input(ex);
    input.max_memory_bytes = o.memory.bytes();
    replay::StepRun step;
    replay::PlanBand band;
    try {
      step = replay::simulate_step(input);
      band = replay::plan_band(input, &step, !o.no_fast_forward);
    } catch (const InputError& e) {
      // A plan that does not fit the model or the cluster: say which of the files it is.
      throw InputError(fmt::format("{}: {}", ex.file, e.what()));
    }
    const report::StepReport rep = report::analyze(input, step);
    rows.push_back(report::validation_row(rep, experiment_id(ex), ex.file, ex.measured->step_time_s, band));
    rows.back().calibration_family = config::prediction_family(ex).name();
    if (ex_it == explained) {
      const auto& row = rows.back();
      explanation = fmt::format("\n{} ({})\nmeasured   {:.4f} s; predicted {:.4f} s, error {:+.1f} %\n{}\n{}", row.id,
                                row.file, row.measured_s, row.predicted_s, 100 * row.error(), band_lines(band, row),
                                report::format_text(rep, false));
    }
  }
  const report::ValidationSummary summary = report::summarize(rows);
  if (!o.csv_path.empty()) write_file(o.csv_path, report::format_validation_csv(rows, record_ptr));
  fmt::print("{}", report::format_validation_text(rows, summary, record_ptr));
  fmt::print("{}", explanation);

  int code = 0;
  if (o.max_mean_error_pct >= 0 && 100 * summary.all.mean_abs_error > o.max_mean_error_pct) {
    fmt::print("\nFAIL: mean |error| {:.1f} % exceeds --max-mean-error {}\n", 100 * summary.all.mean_abs_error,
               o.max_mean_error_pct);
    code = 1;
  }
  if (o.max_worst_error_pct >= 0 && 100 * std::abs(summary.all.worst_error) > o.max_worst_error_pct) {
    fmt::print("\nFAIL: worst error {:+.1f} % ({}) exceeds --max-worst-error {}\n", 100 * summary.all.worst_error,
               summary.all.worst_id, o.max_worst_error_pct);
    code = 1;
  }
  return code;
}

// A finite number >= 0: `nan` would turn the gate off silently (CLI::NonNegativeNumber lets it
// through, and words its refusals as a range up to DBL_MAX).
const CLI::Validator kPercentGate(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0)
        return "expected a finite number of percent >= 0, found " + text;
      return "";
    },
    "PCT >= 0");

}  // namespace

void add_validate_command(CLI::App& app, Action& action) {
  const auto [cmd, options] = add_subcommand(app, action, "validate",
                                             "Simulate experiments with a measured step time and report the error, "
                                             "the band of predictions their null fields allow, marks for plans "
                                             "estimated out of memory or run with a generic precision recipe, and "
                                             "per-family errors beside the calibration record's",
                                             validate);
  cmd->add_option("inputs", options->inputs, "Experiment files, or directories of *.json experiment files")
      ->required();
  cmd->add_option("--csv", options->csv_path, "Also write one CSV row per file to this file");
  cmd->add_option("--max-mean-error", options->max_mean_error_pct,
                  "Exit 1 when the mean absolute error exceeds this many percent")
      ->check(kPercentGate);
  cmd->add_option("--max-worst-error", options->max_worst_error_pct,
                  "Exit 1 when the largest absolute error exceeds this many percent")
      ->check(kPercentGate);
  cmd->add_flag("--no-fast-forward", options->no_fast_forward,
                "Replay every micro-batch of the band's plans instead of fast-forwarding over the pipeline's steady "
                "state (the default where the repetition is checked exact: the same step time in picoseconds); the "
                "prediction itself always replays every micro-batch");
  cmd->add_option("--explain", options->explain, "Also print the band's plans and the full report of the experiment with this id");
  options->memory.add_to(*cmd);
}

}  // namespace trnsim::cli
