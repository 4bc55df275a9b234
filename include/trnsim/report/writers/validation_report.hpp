#pragma once
// The text and CSV forms of validation rows and their statistics (`trnsim validate`).
#include <string>
#include <vector>

#include "trnsim/report/analysis/calibration.hpp"
#include "trnsim/report/analysis/validation.hpp"

namespace trnsim::report {

// The table of rows, then the summary: overall, per chip, per prediction family with the record's
// figures for it (`record` nullptr: none was found). Deterministic (no wall-clock figures).
std::string format_validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary,
                                   const CalibrationRecord* record = nullptr);
// One header line, then one line per row (RFC 4180 quoting where a field needs it); the last
// column says whether the row's family is in `record` (yes, no; empty without a record).
std::string format_validation_csv(const std::vector<ValidationRow>& rows, const CalibrationRecord* record = nullptr);

}  // namespace trnsim::report
