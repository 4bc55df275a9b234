#pragma once
// The text form of `trnsim compare`: one line per metric (baseline, result, change, tolerance,
// status), then a verdict line.
#include <string>
#include <vector>

#include "trnsim/report/analysis/compare.hpp"

namespace trnsim::report {

// `result_name`, `baseline_name`: the files, named in the heading. Deterministic.
std::string format_compare_table(const std::vector<CompareRow>& rows, const std::string& result_name,
                                 const std::string& baseline_name);

}  // namespace trnsim::report
