// The error bar's text line and JSON object (contract in calibration_bar.hpp).
#include "calibration_bar.hpp"

#include <fmt/core.h>

namespace trnsim::report {
namespace {

nlohmann::json pct(const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); }

std::optional<double> mean_of(const std::optional<FamilyErrors>& e) {
  return e ? std::optional<double>(e->mean_abs_error_pct) : std::nullopt;
}

std::string cross_text(const ErrorBar& bar) {
  return bar.cross_family ? fmt::format("cross-family error {:.1f} % (mean |error| of leave-one-family-out predictions)",
                                        bar.cross_family->mean_abs_error_pct)
                          : std::string("no cross-family error in the record");
}

std::string note(const ErrorBar& bar) {
  if (!bar.record) return "no calibration record (calibration/families.json in the configuration directory)";
  if (!bar.in_family()) return "extrapolation: no published row of this family is in the calibration record";
  return "calibrated family";
}

}  // namespace

std::string calibration_line(const ErrorBar& bar) {
  std::string out = fmt::format("error bar  {}: ", bar.family);
  if (!bar.record) return out + note(bar) + "\n";
  if (!bar.in_family()) return out + fmt::format("extrapolation, no published row of this family; {}\n", cross_text(bar));
  const FamilyCalibration& f = *bar.calibrated;
  out += fmt::format("{} published row{}, leave-one-out mean |error| {:.1f} %, in-sample {:.1f} % (worst {:+.1f} %)",
                     f.rows, f.rows == 1 ? "" : "s", f.leave_one_out.mean_abs_error_pct,
                     f.in_sample.mean_abs_error_pct, f.in_sample.worst_error_pct);
  if (f.leave_one_family_out)
    out += fmt::format(", leave-one-family-out {:.1f} %", f.leave_one_family_out->mean_abs_error_pct);
  return out + "\n";
}

nlohmann::json calibration_json(const ErrorBar& bar) {
  const FamilyCalibration* f = bar.in_family() ? &*bar.calibrated : nullptr;
  return {
      {"family", bar.family},
      {"record", bar.record},
      {"in_family", bar.in_family()},
      {"rows", f ? f->rows : 0},
      {"mean_abs_error_pct", f ? nlohmann::json(f->in_sample.mean_abs_error_pct) : nlohmann::json(nullptr)},
      {"worst_error_pct", f ? nlohmann::json(f->in_sample.worst_error_pct) : nlohmann::json(nullptr)},
      {"leave_one_out_error_pct", f ? nlohmann::json(f->leave_one_out.mean_abs_error_pct) : nlohmann::json(nullptr)},
      {"leave_one_family_out_error_pct", f ? pct(mean_of(f->leave_one_family_out)) : nlohmann::json(nullptr)},
      {"cross_family_error_pct", pct(mean_of(bar.cross_family))},
      {"note", note(bar)},
  };
}

}  // namespace trnsim::report
