#pragma once
// The error bar of a prediction: what the calibration record (configs/calibration/families.json,
// written by tools/calibrate.py --families; read by config/calibration_record.hpp) says about the
// prediction's family (chip x software preset x collective runtime release). Errors in percent of
// the measured step time.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace trnsim::report {

struct FamilyErrors {
  double mean_abs_error_pct = 0;
  double worst_error_pct = 0;  // signed, the largest magnitude
};

// One family of the record.
struct FamilyCalibration {
  std::string family;  // config::PredictionFamily::name()
  std::size_t rows = 0;
  FamilyErrors in_sample;      // the presets' predictions (trnsim validate)
  FamilyErrors leave_one_out;  // each row predicted by its chip's constants fitted without it
  // Each row predicted by its chip's constants fitted on the chip's other families; none where the
  // chip has no other family.
  std::optional<FamilyErrors> leave_one_family_out;
};

struct CalibrationRecord {
  std::string file;  // where it was read from
  std::vector<FamilyCalibration> families;
  // Over every leave-one-family-out prediction; none where no chip has two families.
  std::optional<FamilyErrors> cross_family;
  // The family named `family`, or nullptr. O(families).
  const FamilyCalibration* find(const std::string& family) const;
};

// What a report says about its prediction's error. `record` false: no record was found.
struct ErrorBar {
  std::string family;
  bool record = false;
  std::optional<FamilyCalibration> calibrated;  // the family's entry, when the record has it
  std::optional<FamilyErrors> cross_family;
  bool in_family() const { return calibrated.has_value(); }
};

// Contract: the bar of `family` against `record` (nullptr: no record). O(families).
ErrorBar error_bar(const std::string& family, const CalibrationRecord* record);

}  // namespace trnsim::report
