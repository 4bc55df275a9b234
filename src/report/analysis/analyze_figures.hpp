#pragma once
// The analysis of one of the fast-forward's two reduced runs (report/analysis/fast_forward.hpp):
// extrapolate_report moves or keeps every figure of it but the breakdown, memory, stage compute,
// links and findings, which it derives again for the real step; those are not computed here.
#include <cstdint>

#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

// Contract: analyze(input, run, {critical_path off, bottleneck_rank = rank}) with
// StepReport::breakdown holding only `rank`, and memory, stage_compute_s, links and findings
// empty; every other field the same, bit for bit. O(tasks).
StepReport analyze_figures(const replay::StepInput& input, const replay::StepRun& run, std::int32_t rank);

}  // namespace trnsim::report
