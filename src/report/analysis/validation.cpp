// Validation rows and their statistics (contract in validation.hpp).
#include "trnsim/report/analysis/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "trnsim/enum_names.hpp"

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
  const std::string_view at = row.band_position();
  if (at == "in") ++s.in_band;
  if (at == "below") ++s.below_band;
  if (at == "above") ++s.above_band;
}

void finish(ErrorStats& s) {
  if (s.files > 0) s.mean_abs_error /= static_cast<double>(s.files);
}

}  // namespace

std::string_view ValidationRow::band_position() const {
  if (!has_band) return "-";
  if (measured_s < band_fastest_s) return "below";
  if (measured_s > band_slowest_s) return "above";
  return "in";
}

ValidationRow validation_row(const StepReport& report, std::string id, std::string file, double measured_s,
                             const replay::PlanBand& band) {
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
  for (const StageMemoryReport& m : report.memory) {
    if (!m.fits() && m.memory.total() > row.oom_need_bytes) {
      row.oom_need_bytes = m.memory.total();
      row.oom_capacity_bytes = m.capacity;
    }
  }
  if (report.precision.generic()) row.generic_dtype = trnsim::to_string(report.precision.dtype);
  row.has_band = !band.empty();
  row.band_fastest_s = band.fastest_s;
  row.band_slowest_s = band.slowest_s;
  row.band_candidates = band.candidates;
  row.band_fit = band.fit;
  return row;
}

ValidationSummary summarize(const std::vector<ValidationRow>& rows) {
  ValidationSummary s;
  // Ordered by name: deterministic output.
  std::map<std::string, ErrorStats> families, calibration_families;
  for (const ValidationRow& row : rows) {
    add(s.all, row);
    ErrorStats& f = families[row.family];
    f.family = row.family;
    add(f, row);
    if (row.calibration_family.empty()) continue;
    ErrorStats& c = calibration_families[row.calibration_family];
    c.family = row.calibration_family;
    add(c, row);
  }
  finish(s.all);
  for (auto& [name, stats] : families) {
    finish(stats);
    s.families.push_back(stats);
  }
  for (auto& [name, stats] : calibration_families) {
    finish(stats);
    s.calibration_families.push_back(stats);
  }
  return s;
}

}  // namespace trnsim::report
