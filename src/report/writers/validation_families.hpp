#pragma once
// `trnsim validate`'s statistics per prediction family, beside the calibration record's figures
// for each family (report/analysis/calibration.hpp).
#include <string>

#include "trnsim/report/analysis/calibration.hpp"
#include "trnsim/report/analysis/validation.hpp"

namespace trnsim::report {

// One line per family of `summary.calibration_families` (rows, mean |error|, worst; the record's
// leave-one-out and leave-one-family-out errors, or "extrapolation" for a family the record does
// not hold), then the record's cross-family error. `record` nullptr: no record was found.
std::string format_family_lines(const ValidationSummary& summary, const CalibrationRecord* record);

}  // namespace trnsim::report
