#pragma once
// What `trnsim sensitivity` prints and writes: functions of the SensitivityResult alone, so the
// same inputs give the same bytes for any thread count.
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/explore/sensitivity.hpp"

namespace trnsim::explore {

// The plan and base step time, one row per figure (base value with unit, raised value, step time,
// change, elasticity) in the result's order, the skipped figures with their reasons, and the
// capacity search (plans that fit and the fastest at each capacity).
std::string format_sensitivity(const SensitivityResult& result);

// {"kind": "trnsim-sensitivity", "schema_version": 1, "experiment", "title", "step",
//  "elasticity": "ln(t'/t) / ln(x'/x)", "base": PLAN, "figures": [{"name", "unit", "paths",
//  "base_value", "new_value", "step_time_s", "change", "elasticity"}], "skipped": [{"name",
//  "reason"}], "capacity": {"grid", "plans", "invalid", "base": {"hbm_GiB", "fit", "best": PLAN},
//  "raised": {...}}}; PLAN as a sweep's "plans" entries (explore/sweep_json.hpp).
nlohmann::json to_json(const SensitivityResult& result);

// A self-contained page (no script): the elasticities as bars around 0, the table, the skipped
// figures and the capacity search (src/explore/sensitivity_html.cpp).
std::string sensitivity_html(const SensitivityResult& result);

}  // namespace trnsim::explore
