// trnsim compare RESULT.json BASELINE.json: a regression check of one `run --json` report against
// another (README.md, "trnsim compare").
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "trnsim/config/json_file.hpp"
#include "trnsim/error.hpp"
#include "trnsim/report/analysis/compare.hpp"
#include "trnsim/report/writers/compare_table.hpp"
#include "trnsim/report/writers/json_report.hpp"

namespace trnsim::cli {

namespace {

struct CompareCommandOptions {
  std::string result, baseline;
  std::string tolerance = "2%";
  std::vector<std::string> tolerance_for;
  std::vector<std::string> metrics;
};

int compare(const CompareCommandOptions& o) {
  report::CompareOptions options;
  options.schema_version = report::kReportSchemaVersion;
  options.tolerance = report::parse_percent(o.tolerance, "--tolerance");
  for (const auto& text : o.tolerance_for) {
    auto [metric, tolerance] = report::parse_metric_tolerance(text);
    if (!options.tolerance_for.emplace(metric, tolerance).second) {
      throw InputError(fmt::format("--tolerance-for {}: this metric's tolerance is given twice", metric));
    }
  }
  options.only = o.metrics;
  // Reports are trnsim's own output: a key given twice is not looked for (DuplicateKeys).
  const nlohmann::json result = config::read_json_file(o.result, config::DuplicateKeys::LastWins),
                       baseline = config::read_json_file(o.baseline, config::DuplicateKeys::LastWins);
  const auto rows = report::compare_reports({result, o.result}, {baseline, o.baseline}, options);
  fmt::print("{}", report::format_compare_table(rows, o.result, o.baseline));
  return report::any_regression(rows) ? 1 : 0;
}

std::string metric_list() {
  std::string names;
  for (const auto& n : report::compare_metric_names()) names += (names.empty() ? "" : ", ") + n;
  return names;
}

}  // namespace

void add_compare_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<CompareCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare a `run --json` report with a baseline report; exit 1 when a metric regressed past its tolerance");
  cmd->footer(
      "Exit 1 when a metric moved past its tolerance in the bad direction (slower step, lower throughput or MFU, "
      "more peak memory, a larger breakdown part); 0 otherwise: an improvement past the tolerance is reported and "
      "exits 0; 2 on bad input (an unreadable file, a missing field, another schema_version, an unknown metric).");
  cmd->add_option("result", options->result, "The new report (trnsim run --json)")->required();
  cmd->add_option("baseline", options->baseline, "The report to compare with, of the same schema_version")
      ->required();
  cmd->add_option("--tolerance", options->tolerance,
                  "Relative change allowed for every metric, in percent of the baseline: 2%, 2 or 0.5% (default 2%)");
  cmd->add_option("--tolerance-for", options->tolerance_for,
                  "METRIC=PCT: the tolerance of one metric (repeatable). Metrics: " + metric_list() +
                      "; a breakdown part absent from one report counts as 0 s there");
  cmd->add_option("--metric", options->metrics,
                  "Compare and print only this metric (repeatable; default: all), e.g. --metric step_time");
  cmd->callback([&action, options] { action = [options] { return compare(*options); }; });
}

}  // namespace trnsim::cli
