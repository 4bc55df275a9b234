#pragma once
// The text and CSV forms of validation rows and their statistics (`trnsim validate`).
#include <string>
#include <vector>

#include "trnsim/report/analysis/validation.hpp"

namespace trnsim::report {

// The table of rows, then the summary. Deterministic (no wall-clock figures).
std::string format_validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary);
// One header line, then one line per row (RFC 4180 quoting where a field needs it).
std::string format_validation_csv(const std::vector<ValidationRow>& rows);

}  // namespace trnsim::report
