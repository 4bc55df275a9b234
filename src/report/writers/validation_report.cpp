// The text table and the CSV of `trnsim validate` (contract in validation_report.hpp).
#include "trnsim/report/writers/validation_report.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "trnsim/report/writers/csv_report.hpp"

namespace trnsim::report {
namespace {

std::string stats_line(const ErrorStats& s) {
  return fmt::format("{} file{}: mean |error| {:.1f} %, worst {:+.1f} % ({}); measured against band: {} in, {} below, "
                     "{} above",
                     s.files, s.files == 1 ? "" : "s", 100 * s.mean_abs_error, 100 * s.worst_error, s.worst_id,
                     s.in_band, s.below_band, s.above_band);
}

// A band bound in the text table: "-" without a band.
std::string band_seconds(const ValidationRow& r, double seconds) {
  return r.has_band ? fmt::format("{:.3f}", seconds) : "-";
}

// A band bound in the CSV: empty without a band.
std::string band_csv(const ValidationRow& r, double seconds) {
  return r.has_band ? fmt::format("{:.6f}", seconds) : "";
}

}  // namespace

std::string format_validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary) {
  std::size_t id_width = 2, family_width = 6;
  for (const auto& r : rows) {
    id_width = std::max(id_width, r.id.size());
    family_width = std::max(family_width, r.family.size());
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:>12}  {:>11}  {:>10}  {:>10}  {:<5}  {:>8}  {:>8}  {:>8}  {}\n",
                                "id", id_width, "family", family_width, "predicted(s)", "measured(s)", "fastest(s)",
                                "slowest(s)", "band", "error(%)", "MFU(%)", "MFU_m(%)", "main finding");
  for (const auto& r : rows) {
    out += fmt::format("{:<{}}  {:<{}}  {:>12.3f}  {:>11.3f}  {:>10}  {:>10}  {:<5}  {:>+8.1f}  {:>8.1f}  {:>8.1f}  {}\n",
                       r.id, id_width, r.family, family_width, r.predicted_s, r.measured_s,
                       band_seconds(r, r.band_fastest_s), band_seconds(r, r.band_slowest_s), r.band_position(),
                       100 * r.error(), 100 * r.mfu_predicted, 100 * r.mfu_measured, r.finding);
  }
  out += "\nfastest, slowest: the band of predictions over the plans the file's null fields allow that fit in memory "
         "(analytic network model); band: the measurement in it, below or above it\n";
  out += "MFU: predicted; MFU_m: implied by the measurement (model FLOPs / (measured step time x cluster peak))\n";
  out += fmt::format("all       {}\n", stats_line(summary.all));
  for (const auto& f : summary.families) out += fmt::format("  {:<{}}  {}\n", f.family, family_width, stats_line(f));
  return out;
}

std::string format_validation_csv(const std::vector<ValidationRow>& rows) {
  std::string out =
      "id,file,family,predicted_step_time_s,measured_step_time_s,band_fastest_s,band_slowest_s,band,error_pct,"
      "mfu_predicted_pct,mfu_measured_pct,main_finding\n";
  for (const auto& r : rows) {
    out += fmt::format("{},{},{},{:.6f},{:.6f},{},{},{},{:.3f},{:.3f},{:.3f},{}\n", csv_field(r.id), csv_field(r.file),
                       csv_field(r.family), r.predicted_s, r.measured_s, band_csv(r, r.band_fastest_s),
                       band_csv(r, r.band_slowest_s), r.band_position(), 100 * r.error(), 100 * r.mfu_predicted,
                       100 * r.mfu_measured, csv_field(r.finding));
  }
  return out;
}

}  // namespace trnsim::report
