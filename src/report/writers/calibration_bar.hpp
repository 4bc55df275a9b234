#pragma once
// The error bar of a prediction (report/analysis/calibration.hpp) as the text report's line and
// the JSON report's "calibration" object (README, "JSON report").
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/report/analysis/calibration.hpp"

namespace trnsim::report {

// "error bar  FAMILY: N published rows, leave-one-out mean |error| X % ...\n".
std::string calibration_line(const ErrorBar& bar);
// Every key always present (null where it does not apply), so that tools read one shape.
nlohmann::json calibration_json(const ErrorBar& bar);

}  // namespace trnsim::report
