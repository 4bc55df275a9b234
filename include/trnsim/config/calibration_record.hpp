#pragma once
// Reading the calibration record: error statistics per prediction family, written by
// tools/calibrate.py --families (README, "Calibration").
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/report/analysis/calibration.hpp"

namespace trnsim::config {

// config_dir()/calibration/families.json (TRNSIM_CONFIG_DIR aware).
std::string calibration_record_path();

// The record in `path`, or nullopt when no file is there. Throws InputError naming the file, the
// JSON path, what was expected and what was found for a record it cannot read. O(families).
std::optional<report::CalibrationRecord> read_calibration_record(const std::string& path);

// The record in `document` (the content of `file`). Keys it does not use (the command line, the
// date, per-row figures) are checked to be there, not read; any other key is an error.
report::CalibrationRecord parse_calibration_record(const nlohmann::json& document, const std::string& file);

}  // namespace trnsim::config
