#pragma once
// The sections of the HTML report (html_report.cpp assembles them). Each returns an HTML
// fragment with its own heading; all text in it is escaped.
#include <string>

#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report::html {

// Gantt view of one pipeline: one row per stage, the simulated rank that represents it; a tall
// lane for the compute stream and thin lanes for the TP, PP and DP communication streams.
// Contract: the plot is kGanttBins pixels wide and each lane draws at most one rectangle per
// pixel, whatever the number of tasks, so the page stays small. O(tasks + stages x kGanttBins).
std::string gantt_section(const replay::StepRun& run);
inline constexpr int kGanttBins = 1000;

// Memory per stage: stacked bars by term against the rank's capacity.
std::string memory_section(const StepReport& report);

// Links that carried traffic: busy fraction and bytes per link kind, and the busiest links.
std::string links_section(const replay::StepRun& run, double step_time_s);

}  // namespace trnsim::report::html
