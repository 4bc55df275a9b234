// validate's per-family lines (contract in validation_families.hpp).
#include "validation_families.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace trnsim::report {
namespace {

std::string recorded(const FamilyCalibration* f) {
  if (f == nullptr) return "extrapolation: not in the calibration record";
  std::string out = fmt::format("leave-one-out {:.1f} %", f->leave_one_out.mean_abs_error_pct);
  if (!f->leave_one_family_out) return out + ", leave-one-family-out -: no other family on this chip";
  return out + fmt::format(", leave-one-family-out {:.1f} % (worst {:+.1f} %)",
                           f->leave_one_family_out->mean_abs_error_pct, f->leave_one_family_out->worst_error_pct);
}

}  // namespace

std::string format_family_lines(const ValidationSummary& summary, const CalibrationRecord* record) {
  if (summary.calibration_families.empty()) return "";
  std::size_t width = 6;
  for (const ErrorStats& f : summary.calibration_families) width = std::max(width, f.family.size());
  std::string out = fmt::format("families (chip x software@release): these files; {}\n",
                                record ? "leave-one-out and leave-one-family-out from the calibration record"
                                       : "no calibration record (calibration/families.json in the configuration "
                                         "directory)");
  for (const ErrorStats& f : summary.calibration_families) {
    out += fmt::format("  {:<{}}  {} file{}: mean |error| {:.1f} %, worst {:+.1f} % ({})", f.family, width, f.files,
                       f.files == 1 ? "" : "s", 100 * f.mean_abs_error, 100 * f.worst_error, f.worst_id);
    out += record ? "; " + recorded(record->find(f.family)) + "\n" : "\n";
  }
  if (record == nullptr) return out;
  if (!record->cross_family) return out + "cross-family error: none in the record (no chip has two families)\n";
  return out + fmt::format("cross-family error (the record's leave-one-family-out predictions): mean |error| {:.1f} %, "
                           "worst {:+.1f} %\n",
                           record->cross_family->mean_abs_error_pct, record->cross_family->worst_error_pct);
}

}  // namespace trnsim::report
