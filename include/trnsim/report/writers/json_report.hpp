#pragma once
// The JSON report for tools (schema in README.md, "JSON report"). Wall-clock figures are left out
// so that the same inputs give byte-identical reports.
#include <nlohmann/json.hpp>

#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

// `experiment`: the fully resolved experiment (config::Experiment::resolved).
nlohmann::json to_json(const StepReport& report, const nlohmann::json& experiment);
// 2: findings carry seconds, evidence and suggestion; critical_path, links, stage_compute_s and
// hbm_bound_s added; the embedded experiment carries the resolved plan's choices.
inline constexpr int kReportSchemaVersion = 2;

}  // namespace trnsim::report
