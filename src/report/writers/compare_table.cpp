// The table of `trnsim compare` (contract in compare_table.hpp).
#include "trnsim/report/writers/compare_table.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace trnsim::report {
namespace {

std::string status_text(const CompareRow& r) {
  std::string s = r.status == CompareStatus::Regressed ? "REGRESSED"
                  : r.status == CompareStatus::Improved ? "improved"
                                                         : "ok";
  if (r.absent_in_baseline) s += " (absent in baseline: 0 s)";
  if (r.absent_in_result) s += " (absent in result: 0 s)";
  return s;
}

std::string label(const CompareRow& r) { return r.unit.empty() ? r.metric : fmt::format("{} ({})", r.metric, r.unit); }

}  // namespace

std::string format_compare_table(const std::vector<CompareRow>& rows, const std::string& result_name,
                                 const std::string& baseline_name) {
  std::size_t width = 6;
  for (const auto& r : rows) width = std::max(width, label(r).size());
  // 7 significant digits: enough to show a change that a 0 % tolerance fails on.
  std::string out = fmt::format("result    {}\nbaseline  {}\n\n", result_name, baseline_name);
  out += fmt::format("{:<{}}  {:>14}  {:>14}  {:>11}  {:>9}  {}\n", "metric", width, "baseline", "result", "change(%)",
                     "tol(%)", "status");
  std::vector<std::string> regressed;
  int improved = 0;
  for (const auto& r : rows) {
    out += fmt::format("{:<{}}  {:>14.7g}  {:>14.7g}  {:>+11.4g}  {:>9.4g}  {}\n", label(r), width, r.baseline, r.result,
                       100 * r.change, 100 * r.tolerance, status_text(r));
    if (r.status == CompareStatus::Regressed) regressed.push_back(r.metric);
    if (r.status == CompareStatus::Improved) ++improved;
  }
  out += "\nchange: (result - baseline) / baseline; worse is higher for step_time, peak_memory and breakdown parts, "
         "lower for throughput and mfu\n";
  if (regressed.empty()) {
    out += fmt::format("OK: no metric regressed past its tolerance ({} improved past it)\n", improved);
  } else {
    std::string names;
    for (const auto& n : regressed) names += (names.empty() ? "" : ", ") + n;
    out += fmt::format("FAIL: {} metric{} regressed past {} tolerance: {}\n", regressed.size(),
                       regressed.size() == 1 ? "" : "s", regressed.size() == 1 ? "its" : "their", names);
  }
  return out;
}

}  // namespace trnsim::report
