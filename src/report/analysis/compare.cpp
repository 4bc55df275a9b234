// Two JSON reports compared metric by metric (contract in compare.hpp).
#include "trnsim/report/analysis/compare.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <system_error>
#include <tuple>

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/report/analysis/breakdown.hpp"

namespace trnsim::report {
namespace {

using nlohmann::json;

constexpr std::string_view kBreakdownPrefix = "breakdown.";
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// The value at `pointer` (a JSON pointer such as "/results/step_time_s"), required to be a
// finite number; the error names the report, the pointer, what was expected and what was found.
double number_at(const ReportDocument& r, const std::string& pointer, bool positive = false) {
  const json::json_pointer p(pointer);
  if (!r.doc.contains(p)) throw InputError(fmt::format("{}: {}: missing (expected a number)", r.name, pointer));
  const json& v = r.doc.at(p);
  if (!v.is_number()) {
    throw InputError(fmt::format("{}: {}: expected a number, found {}", r.name, pointer, v.dump()));
  }
  const double x = v.get<double>();
  // Every compared figure is a time, a rate, a fraction or a size: a negative one would turn the
  // direction of a regression around.
  if (!std::isfinite(x) || x < 0 || (positive && x == 0))
    throw InputError(fmt::format("{}: {}: expected a finite number {} 0, found {}", r.name, pointer,
                                 positive ? ">" : ">=", v.dump()));
  return x;
}

void check_schema(const ReportDocument& r, int expected) {
  if (!r.doc.is_object()) {
    throw InputError(fmt::format("{}: expected a `trnsim run --json` report (a JSON object), found {}", r.name,
                                 r.doc.type_name()));
  }
  // Sweep and sensitivity files name their kind; a run report has none.
  if (const auto kind = r.doc.find("kind"); kind != r.doc.end() && kind->is_string()) {
    throw InputError(fmt::format("{}: /kind: expected a `trnsim run --json` report, found a \"{}\" file", r.name,
                                 kind->get<std::string>()));
  }
  if (!r.doc.contains("schema_version")) {
    throw InputError(fmt::format("{}: /schema_version: missing (expected schema_version {}; is this a `trnsim run "
                                 "--json` report?)",
                                 r.name, expected));
  }
  const json& v = r.doc.at("schema_version");
  if (!v.is_number_integer() || v.get<long long>() != expected) {
    throw InputError(fmt::format("{}: /schema_version: expected schema_version {}, found {} (regenerate the report "
                                 "with this trnsim)",
                                 r.name, expected, v.dump()));
  }
}

// The largest per-rank total of any pipeline stage (the CSV's peak_memory_GiB), GiB.
double peak_memory_GiB(const ReportDocument& r) {
  const json::json_pointer p("/memory");
  if (!r.doc.contains(p)) throw InputError(fmt::format("{}: /memory: missing (expected an array of stages)", r.name));
  const json& stages = r.doc.at(p);
  if (!stages.is_array() || stages.empty()) {
    throw InputError(fmt::format("{}: /memory: expected a non-empty array of stages, found {}", r.name, stages.dump()));
  }
  double peak = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    peak = std::max(peak, number_at(r, fmt::format("/memory/{}/total_bytes", i)));
  }
  return peak / kBytesPerGiB;
}

// The breakdown parts of one report: name -> seconds.
std::map<std::string, double, std::less<>> breakdown_parts(const ReportDocument& r) {
  const json::json_pointer p("/breakdown/seconds");
  if (!r.doc.contains(p)) throw InputError(fmt::format("{}: /breakdown/seconds: missing (expected an object)", r.name));
  const json& parts = r.doc.at(p);
  if (!parts.is_object()) {
    throw InputError(fmt::format("{}: /breakdown/seconds: expected an object, found {}", r.name, parts.dump()));
  }
  std::map<std::string, double, std::less<>> out;
  for (const auto& [name, v] : parts.items()) {
    out[name] = number_at(r, (json::json_pointer("/breakdown/seconds") / name).to_string());
  }
  return out;
}

CompareStatus status_of(double change, double tolerance, Worse worse) {
  const double bad = worse == Worse::Higher ? change : -change;
  // A change equal to the tolerance passes, also when rounding puts it an ulp above:
  // (1.02 - 1) / 1 is 0.020000000000000018. The slack is a billionth of the tolerance (none at 0).
  const double limit = tolerance * (1 + 1e-9);
  if (bad > limit) return CompareStatus::Regressed;
  if (-bad > limit) return CompareStatus::Improved;
  return CompareStatus::Within;
}

CompareRow make_row(std::string metric, std::string unit, Worse worse, double baseline, double result,
                    const CompareOptions& o) {
  CompareRow row;
  row.metric = std::move(metric);
  row.unit = std::move(unit);
  row.worse = worse;
  row.baseline = baseline;
  row.result = result;
  if (baseline != 0) {
    row.change = (result - baseline) / baseline;
  } else if (result != 0) {
    row.change = std::copysign(std::numeric_limits<double>::infinity(), result);
  }
  const auto it = o.tolerance_for.find(row.metric);
  row.tolerance = it == o.tolerance_for.end() ? o.tolerance : it->second;
  row.status = status_of(row.change, row.tolerance, worse);
  return row;
}

}  // namespace

std::vector<std::string> compare_metric_names() {
  std::vector<std::string> names = {"step_time", "throughput", "mfu", "peak_memory"};
  for (int i = 0; i < kPartCount; ++i) {
    names.push_back(std::string(kBreakdownPrefix) + std::string(part_name(static_cast<Part>(i))));
  }
  return names;
}

std::vector<CompareRow> compare_reports(const ReportDocument& result, const ReportDocument& baseline,
                                        const CompareOptions& o) {
  check_schema(result, o.schema_version);
  check_schema(baseline, o.schema_version);
  const auto result_parts = breakdown_parts(result), baseline_parts = breakdown_parts(baseline);

  // The parts in table order: this build's, then any other either report holds, by name.
  std::vector<std::string> parts;
  for (int i = 0; i < kPartCount; ++i) parts.emplace_back(part_name(static_cast<Part>(i)));
  std::set<std::string, std::less<>> extra;
  for (const auto* m : {&result_parts, &baseline_parts}) {
    for (const auto& [name, seconds] : *m) {
      if (std::find(parts.begin(), parts.end(), name) == parts.end()) extra.insert(name);
    }
  }
  parts.insert(parts.end(), extra.begin(), extra.end());

  // A metric --tolerance-for or --metric names must exist: a typo would otherwise check nothing.
  const auto fixed = compare_metric_names();
  const auto check_name = [&](std::string_view option, const std::string& metric) {
    const bool part = metric.starts_with(kBreakdownPrefix) &&
                      std::find(parts.begin(), parts.end(), metric.substr(kBreakdownPrefix.size())) != parts.end();
    if (!part && std::find(fixed.begin(), fixed.end(), metric) == fixed.end()) {
      std::string known;
      for (const auto& n : fixed) known += (known.empty() ? "" : ", ") + n;
      throw InputError(fmt::format("{} {}: unknown metric (expected one of {})", option, metric, known));
    }
  };
  for (const auto& [metric, pct] : o.tolerance_for) check_name("--tolerance-for", metric);
  for (const auto& metric : o.only) check_name("--metric", metric);

  std::vector<CompareRow> rows;
  const auto both = [&](const std::string& pointer, bool positive = false) {
    return std::pair{number_at(baseline, pointer, positive), number_at(result, pointer, positive)};
  };
  // A step takes time: 0 s would make any change infinite (or hide one where both are 0).
  auto [b, r] = both("/results/step_time_s", true);
  rows.push_back(make_row("step_time", "s", Worse::Higher, b, r, o));
  std::tie(b, r) = both("/results/tokens_per_s");
  rows.push_back(make_row("throughput", "tokens/s", Worse::Lower, b, r, o));
  std::tie(b, r) = both("/results/mfu");
  rows.push_back(make_row("mfu", "", Worse::Lower, b, r, o));
  rows.push_back(make_row("peak_memory", "GiB", Worse::Higher, peak_memory_GiB(baseline), peak_memory_GiB(result), o));
  for (const auto& part : parts) {
    const auto in_b = baseline_parts.find(part), in_r = result_parts.find(part);
    CompareRow row = make_row(std::string(kBreakdownPrefix) + part, "s", Worse::Higher,
                              in_b == baseline_parts.end() ? 0.0 : in_b->second,
                              in_r == result_parts.end() ? 0.0 : in_r->second, o);
    row.absent_in_baseline = in_b == baseline_parts.end();
    row.absent_in_result = in_r == result_parts.end();
    rows.push_back(std::move(row));
  }
  if (!o.only.empty()) {
    std::erase_if(rows, [&](const CompareRow& row) {
      return std::find(o.only.begin(), o.only.end(), row.metric) == o.only.end();
    });
  }
  return rows;
}

bool any_regression(const std::vector<CompareRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.status == CompareStatus::Regressed; });
}

double parse_percent(std::string_view text, std::string_view what) {
  const double fraction = parse_signed_percent(text, what);
  if (fraction < 0) throw InputError(fmt::format("{}: expected a percentage >= 0, found \"{}\"", what, text));
  return fraction;
}

double parse_signed_percent(std::string_view text, std::string_view what) {
  std::string_view digits = text;
  if (digits.ends_with('%')) digits.remove_suffix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) {
    throw InputError(fmt::format("{}: expected a percentage such as 2%, 2 or 0.5%, found \"{}\"", what, text));
  }
  return value / 100;
}

std::pair<std::string, double> parse_metric_tolerance(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw InputError(fmt::format("--tolerance-for {}: expected METRIC=PCT, e.g. step_time=1%", text));
  }
  return {std::string(text.substr(0, eq)), parse_percent(text.substr(eq + 1), fmt::format("--tolerance-for {}", text))};
}

}  // namespace trnsim::report
