#pragma once
// The HTML report: one self-contained page (inline CSS and SVG; no scripts, fonts or other
// resources, so it opens offline) with the headline figures, the breakdown, a Gantt view of the
// pipeline, memory per stage, link utilisation and the findings.
#include <string>

#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

// Contract: `report` = analyze(input, run). Deterministic (no wall-clock figures, no dates): the
// same inputs give byte-identical pages. The Gantt draws at most one rectangle per pixel and lane,
// so the page stays small for any number of tasks. Cost: O(tasks + links log links).
std::string format_html(const replay::StepInput& input, const replay::StepRun& run, const StepReport& report);

}  // namespace trnsim::report
