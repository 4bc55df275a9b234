#pragma once
// `trnsim sweep --html F` (and `trnsim merge --html F`): one self-contained page (no scripts,
// fonts or links to load) with what ran, a heat map of the metric over two axes
// (explore/sweep_heat_map.hpp), the simulated plans ranked by step time with their breakdown,
// and the pruned plans (invalid, out of memory) with their reason. A function of the SweepResult
// and these options alone, with no timestamp: merged shards give the same bytes as the
// unsharded sweep.
#include <array>
#include <optional>
#include <string>

#include "trnsim/explore/sweep.hpp"
#include "trnsim/explore/sweep_heat_map.hpp"

namespace trnsim::explore {

struct SweepHtmlOptions {
  std::optional<std::array<HeatAxis, 2>> axes;  // none: default_heat_axes
  HeatMetric metric = HeatMetric::StepTime;
};

// O(points x log(points)); all text escaped.
std::string sweep_html(const SweepResult& result, const SweepHtmlOptions& options);

}  // namespace trnsim::explore
