// Validation rows, their statistics and their text and CSV forms (contract in validation.hpp).
#include "trnsim/report/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "trnsim/report/csv_report.hpp"

namespace trnsim::report {
namespace {

// The largest part of the bottleneck rank's breakdown (the first on ties), with its share.
std::string largest_part(const StepReport& r) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < r.breakdown.seconds.size(); ++i) {
    if (r.breakdown.seconds[i] > r.breakdown.seconds[best]) best = i;
  }
  const double share = r.step_time_s > 0 ? 100 * r.breakdown.seconds[best] / r.step_time_s : 0.0;
  return fmt::format("{} {:.1f} % of the step", part_name(static_cast<Part>(best)), share);
}

void add(ErrorStats& s, const ValidationRow& row) {
  const double e = row.error();
  // Running sum of |e| in mean_abs_error until summarize divides it.
  s.mean_abs_error += std::abs(e);
  if (s.files == 0 || std::abs(e) > std::abs(s.worst_error)) {
    s.worst_error = e;
    s.worst_id = row.id;
  }
  ++s.files;
}

void finish(ErrorStats& s) {
  if (s.files > 0) s.mean_abs_error /= static_cast<double>(s.files);
}

std::string stats_line(const ErrorStats& s) {
  return fmt::format("{} file{}: mean |error| {:.1f} %, worst {:+.1f} % ({})", s.files, s.files == 1 ? "" : "s",
                     100 * s.mean_abs_error, 100 * s.worst_error, s.worst_id);
}


}  // namespace

ValidationRow validation_row(const StepReport& report, std::string id, std::string file, double measured_s) {
  ValidationRow row;
  row.id = std::move(id);
  row.file = std::move(file);
  row.family = report.chip;
  row.predicted_s = report.step_time_s;
  row.measured_s = measured_s;
  row.mfu_predicted = report.mfu;
  row.mfu_measured = measured_s > 0 && report.peak_flops > 0 ? report.model_flops / (measured_s * report.peak_flops)
                                                              : 0.0;
  row.finding = report.findings.empty()
                    ? largest_part(report)
                    : fmt::format("[{}] {}", report.findings.front().rule, report.findings.front().message);
  return row;
}

ValidationSummary summarize(const std::vector<ValidationRow>& rows) {
  ValidationSummary s;
  std::map<std::string, ErrorStats> families;  // ordered by name: deterministic output
  for (const ValidationRow& row : rows) {
    add(s.all, row);
    ErrorStats& f = families[row.family];
    f.family = row.family;
    add(f, row);
  }
  finish(s.all);
  for (auto& [name, stats] : families) {
    finish(stats);
    s.families.push_back(stats);
  }
  return s;
}

std::string format_validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary) {
  std::size_t id_width = 2, family_width = 6;
  for (const auto& r : rows) {
    id_width = std::max(id_width, r.id.size());
    family_width = std::max(family_width, r.family.size());
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:>12}  {:>11}  {:>8}  {:>8}  {:>8}  {}\n", "id", id_width, "family",
                                family_width, "predicted(s)", "measured(s)", "error(%)", "MFU(%)", "MFU_m(%)",
                                "main finding");
  for (const auto& r : rows) {
    out += fmt::format("{:<{}}  {:<{}}  {:>12.3f}  {:>11.3f}  {:>+8.1f}  {:>8.1f}  {:>8.1f}  {}\n", r.id, id_width,
                       r.family, family_width, r.predicted_s, r.measured_s, 100 * r.error(), 100 * r.mfu_predicted,
                       100 * r.mfu_measured, r.finding);
  }
  out += "\nMFU: predicted; MFU_m: implied by the measurement (model FLOPs / (measured step time x cluster peak))\n";
  out += fmt::format("all       {}\n", stats_line(summary.all));
  for (const auto& f : summary.families) out += fmt::format("  {:<{}}  {}\n", f.family, family_width, stats_line(f));
  return out;
}

std::string format_validation_csv(const std::vector<ValidationRow>& rows) {
  std::string out =
      "id,file,family,predicted_step_time_s,measured_step_time_s,error_pct,mfu_predicted_pct,mfu_measured_pct,"
      "main_finding\n";
  for (const auto& r : rows) {
    out += fmt::format("{},{},{},{:.6f},{:.6f},{:.3f},{:.3f},{:.3f},{}\n", csv_field(r.id), csv_field(r.file),
                       csv_field(r.family), r.predicted_s, r.measured_s, 100 * r.error(), 100 * r.mfu_predicted,
                       100 * r.mfu_measured, csv_field(r.finding));
  }
  return out;
}

}  // namespace trnsim::report
