#pragma once
// The terminal summary of one step: what ran, the headline figures, the breakdown, memory, the
// ranked findings with their suggestions, the critical path and the busiest links.
#include <string>

#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

// wall_times = false leaves out the wall-clock line, for output that must be byte-identical.
std::string format_text(const StepReport& report, bool wall_times = true);

}  // namespace trnsim::report
