#pragma once
// Two `trnsim run --json` reports side by side (`trnsim compare`): the headline figures and every
// breakdown part, each with its relative change and whether it moved past its tolerance in the
// bad direction. The table's text form: report/writers/compare_table.hpp.
//
// Why this reads JSON in analysis/: a regression check compares a fresh run with a report
// committed long ago, so the only input is the JSON document; no StepReport exists for the
// baseline. The JSON format itself belongs to writers/json_report.hpp, which analysis/ may not
// include: the caller passes the schema version it expects (report::kReportSchemaVersion).
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trnsim::report {

// Which direction of change is a regression.
enum class Worse { Higher, Lower };

enum class CompareStatus {
  Within,     // |change| <= tolerance
  Improved,   // moved past tolerance in the good direction (reported, not a failure)
  Regressed,  // moved past tolerance in the bad direction
};

// A report to compare and the name errors and the table use for it (its file path).
struct ReportDocument {
  const nlohmann::json& doc;
  std::string name;
};

struct CompareOptions {
  int schema_version = 0;     // both reports must carry exactly this schema_version
  double tolerance = 0.02;    // default relative tolerance, a fraction (0.02 = 2 %)
  std::map<std::string, double, std::less<>> tolerance_for;  // metric name -> fraction
  std::vector<std::string> only;  // when not empty, the rows of these metrics only (--metric)
};

struct CompareRow {
  std::string metric;  // stable name, as --tolerance-for takes it: "step_time", "breakdown.forward"
  std::string unit;    // "s", "tokens/s", "" (a fraction), "GiB"
  Worse worse = Worse::Higher;
  double baseline = 0, result = 0;  // in `unit`
  // (result - baseline) / baseline; 0 when both are 0; +-infinity when only the baseline is 0.
  double change = 0;
  double tolerance = 0;  // fraction
  CompareStatus status = CompareStatus::Within;
  // Breakdown parts only: a part absent from a report counts as 0 seconds there (the breakdown
  // lists where the time went; a part it does not list had none). These say which was absent.
  bool absent_in_baseline = false, absent_in_result = false;
};

// The metric names in table order: step_time, throughput, mfu, peak_memory, then breakdown.<part>
// for every part this build's report writes (report::part_name). --tolerance-for accepts these
// and any breakdown part either report holds.
std::vector<std::string> compare_metric_names();

// Contract: the rows of `result` against `baseline`, in compare_metric_names() order, then parts
// found only in the reports in name order. Throws InputError naming the report and the JSON
// pointer of a missing or malformed field, a schema_version other than options.schema_version
// ("expected schema_version N, found M"), or a tolerance_for or only name that is no metric.
// Every field is read and checked even when `only` leaves its row out. O(parts).
std::vector<CompareRow> compare_reports(const ReportDocument& result, const ReportDocument& baseline,
                                        const CompareOptions& options);

// True when any row regressed (the exit code 1 of `trnsim compare`).
bool any_regression(const std::vector<CompareRow>& rows);

// A non-negative percentage: "2%", "2", "0.5%" -> 0.02, 0.02, 0.005. Throws InputError naming
// `what` (e.g. "--tolerance") for anything else: empty, negative, not a number, not finite.
double parse_percent(std::string_view text, std::string_view what);
// The same for any sign ("-20%" -> -0.2): the one parser of percentages on the command line
// (`sensitivity --step` adds its own bounds). Throws InputError naming `what` for an empty,
// non-numeric or non-finite text.
double parse_signed_percent(std::string_view text, std::string_view what);

// "METRIC=PCT" (--tolerance-for) -> {METRIC, fraction}; throws InputError when malformed.
std::pair<std::string, double> parse_metric_tolerance(std::string_view text);

}  // namespace trnsim::report
