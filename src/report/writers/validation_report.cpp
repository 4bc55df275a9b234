// The text table and the CSV of `trnsim validate` (contract in validation_report.hpp).
#include "trnsim/report/writers/validation_report.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "trnsim/report/writers/csv_report.hpp"
#include "validation_families.hpp"
#include "trnsim/units.hpp"

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

// What the prediction stands for, when it is not a plan that fits run with the software's own
// recipe, or whose family the calibration record does not hold: "OOM est. 81.6 of 80 GiB; generic
// fp8 recipe; extrapolation"; "-" for none.
std::string marks(const ValidationRow& r, const CalibrationRecord* record) {
  std::string out;
  if (r.out_of_memory()) out = fmt::format("OOM est. {:.3g} of {:.3g} GiB", r.oom_need_bytes / units::kGiB,
                                           r.oom_capacity_bytes / units::kGiB);
  if (!r.generic_dtype.empty()) out += fmt::format("{}generic {} recipe", out.empty() ? "" : "; ", r.generic_dtype);
  if (record != nullptr && record->find(r.calibration_family) == nullptr)
    out += fmt::format("{}extrapolation", out.empty() ? "" : "; ");
  return out.empty() ? "-" : out;
}

// The CSV's out-of-memory figures (GiB): empty when the plan fits.
std::string oom_csv(const ValidationRow& r, double bytes) {
  return r.out_of_memory() ? fmt::format("{:.6f}", bytes / units::kGiB) : "";
}

}  // namespace

std::string format_validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary,
                                   const CalibrationRecord* record) {
  std::size_t id_width = 2, family_width = 6, marks_width = 5;
  for (const auto& r : rows) {
    id_width = std::max(id_width, r.id.size());
    family_width = std::max(family_width, r.family.size());
    marks_width = std::max(marks_width, marks(r, record).size());
  }
  std::string out =
      fmt::format("{:<{}}  {:<{}}  {:>12}  {:>11}  {:>10}  {:>10}  {:<5}  {:>8}  {:>8}  {:>8}  {:<{}}  {}\n", "id",
                  id_width, "family", family_width, "predicted(s)", "measured(s)", "fastest(s)", "slowest(s)", "band",
                  "error(%)", "MFU(%)", "MFU_m(%)", "marks", marks_width, "main finding");
  for (const auto& r : rows) {
    out += fmt::format(
        "{:<{}}  {:<{}}  {:>12.3f}  {:>11.3f}  {:>10}  {:>10}  {:<5}  {:>+8.1f}  {:>8.1f}  {:>8.1f}  {:<{}}  {}\n", r.id,
        id_width, r.family, family_width, r.predicted_s, r.measured_s, band_seconds(r, r.band_fastest_s),
        band_seconds(r, r.band_slowest_s), r.band_position(), 100 * r.error(), 100 * r.mfu_predicted,
        100 * r.mfu_measured, marks(r, record), marks_width, r.finding);
  }
  out += "\nfastest, slowest: the band of predictions over the plans the file's null fields allow that fit in memory "
         "(analytic network model); band: the measurement in it, below or above it\n";
  out += "MFU: predicted; MFU_m: implied by the measurement (model FLOPs / (measured step time x cluster peak))\n";
  out += "marks: OOM est. = the plan's memory estimate exceeds the rank's HBM (largest stage, GiB), yet it is "
         "predicted; generic = the software has no precision recipe for the dtype, the generic one ran"
         + std::string(record ? "; extrapolation = the row's family is not in the calibration record" : "") + "\n";
  out += fmt::format("all       {}\n", stats_line(summary.all));
  for (const auto& f : summary.families) out += fmt::format("  {:<{}}  {}\n", f.family, family_width, stats_line(f));
  return out + format_family_lines(summary, record);
}

std::string format_validation_csv(const std::vector<ValidationRow>& rows, const CalibrationRecord* record) {
  std::string out =
      "id,file,family,predicted_step_time_s,measured_step_time_s,band_fastest_s,band_slowest_s,band,error_pct,"
      "mfu_predicted_pct,mfu_measured_pct,oom_estimate_GiB,oom_capacity_GiB,generic_recipe_dtype,main_finding,"
      "calibration_family,in_calibration_record\n";
  for (const auto& r : rows) {
    const std::string in_record = record == nullptr ? "" : record->find(r.calibration_family) ? "yes" : "no";
    out += fmt::format("{},{},{},{:.6f},{:.6f},{},{},{},{:.3f},{:.3f},{:.3f},{},{},{},{},{},{}\n", csv_field(r.id),
                       csv_field(r.file), csv_field(r.family), r.predicted_s, r.measured_s,
                       band_csv(r, r.band_fastest_s), band_csv(r, r.band_slowest_s), r.band_position(),
                       100 * r.error(), 100 * r.mfu_predicted, 100 * r.mfu_measured,
                       oom_csv(r, r.oom_need_bytes), oom_csv(r, r.oom_capacity_bytes), csv_field(r.generic_dtype),
                       csv_field(r.finding), csv_field(r.calibration_family), in_record);
  }
  return out;
}

}  // namespace trnsim::report
