#pragma once
// Predicted against measured step times (`trnsim validate`): one row per experiment file, error
// statistics over all rows and per hardware family. Their text and CSV forms:
// report/writers/validation_report.hpp.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/replay/plan_band.hpp"
#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

struct ValidationRow {
  std::string id;      // the experiment's id (the file name when it has none)
  std::string file;
  std::string family;  // the chip of the instance: "A100-SXM4-80GB", "Trainium"
  // The prediction family (config::PredictionFamily::name(): chip x software@release), set by the
  // caller; "" leaves the row out of the per-family statistics of the calibration record's families.
  std::string calibration_family;
  double predicted_s = 0, measured_s = 0;
  double mfu_predicted = 0;  // fraction of peak, as StepReport::mfu
  double mfu_measured = 0;   // model FLOPs / (measured step time x cluster peak)
  std::string finding;       // the first finding, else the largest breakdown part
  // Marks on what the prediction stands for. A plan whose memory estimate exceeds the rank's HBM
  // share: the largest stage's need and the capacity (bytes; both 0 when every stage fits). A
  // training dtype the software has no precision recipe for (the generic one ran): its spelling,
  // else "".
  double oom_need_bytes = 0, oom_capacity_bytes = 0;
  std::string generic_dtype;
  bool out_of_memory() const { return oom_need_bytes > 0; }
  // The band of predictions the unpublished fields allow (replay/plan_band.hpp); has_band is
  // false when no candidate was replayed (none fits in memory).
  bool has_band = false;
  double band_fastest_s = 0, band_slowest_s = 0;
  std::size_t band_candidates = 0, band_fit = 0;
  // Signed relative error of the prediction: (predicted - measured) / measured.
  double error() const { return (predicted_s - measured_s) / measured_s; }
  // Where the measurement lies against [band_fastest_s, band_slowest_s], bounds included: "in",
  // "below" or "above"; "-" without a band.
  std::string_view band_position() const;
};

// Contract: measured_s > 0. The row of one simulated step against its measurement and its band.
ValidationRow validation_row(const StepReport& report, std::string id, std::string file, double measured_s,
                             const replay::PlanBand& band);

struct ErrorStats {
  std::string family;           // "" for all rows together
  std::size_t files = 0;
  double mean_abs_error = 0;    // mean of |error()|, a fraction
  double worst_error = 0;       // the signed error of largest magnitude (first row on ties)
  std::string worst_id;
  std::size_t in_band = 0, below_band = 0, above_band = 0;  // rows by band_position()
};

struct ValidationSummary {
  ErrorStats all;
  std::vector<ErrorStats> families;  // ascending by family name
  // Per prediction family (ValidationRow::calibration_family, rows with one), ascending by name.
  std::vector<ErrorStats> calibration_families;
};

// Contract: statistics of `rows` (empty rows give zero counts). O(rows log families).
ValidationSummary summarize(const std::vector<ValidationRow>& rows);

}  // namespace trnsim::report
