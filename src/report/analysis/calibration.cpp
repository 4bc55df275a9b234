// The error bar of a prediction (contract in calibration.hpp).
#include "trnsim/report/analysis/calibration.hpp"

namespace trnsim::report {

const FamilyCalibration* CalibrationRecord::find(const std::string& family) const {
  for (const FamilyCalibration& f : families)
    if (f.family == family) return &f;
  return nullptr;
}

ErrorBar error_bar(const std::string& family, const CalibrationRecord* record) {
  ErrorBar bar;
  bar.family = family;
  if (record == nullptr) return bar;
  bar.record = true;
  if (const FamilyCalibration* f = record->find(family)) bar.calibrated = *f;
  bar.cross_family = record->cross_family;
  return bar;
}

}  // namespace trnsim::report
