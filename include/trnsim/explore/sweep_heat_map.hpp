#pragma once
// The heat map of a sweep (`trnsim sweep --html F --axes X,Y --metric M`): the points placed on a
// grid of two axes, each cell holding the best simulated plan with those two values over all the
// other axes, or, when none ran, why (invalid, out of memory). A function of the SweepResult
// alone, so merged shards give the same map as the unsharded sweep.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/explore/sweep.hpp"

namespace trnsim::explore {

// What colours the cells: the step time (best: the least) or the MFU (best: the most).
enum class HeatMetric : std::uint8_t { StepTime, Mfu };
// "step_time" or "mfu"; throws InputError naming --metric otherwise.
HeatMetric parse_heat_metric(std::string_view text);
double metric_value(HeatMetric metric, const PlanOutcome& o);

// An axis: a plan field, or a --vary path by its position in SweepSummary::vary_paths.
struct HeatAxis {
  enum class Field : std::uint8_t { Tp, Pp, Dp, MicroBatch, VirtualStages, Recompute, Zero, SequenceParallel, Vary };
  Field field = Field::Tp;
  std::size_t vary = 0;
  bool operator==(const HeatAxis&) const = default;
};

// Every axis of a sweep in the order the default takes them: tp, pp, dp, micro_batch,
// virtual_stages, recompute, zero, sp, then the --vary paths in the order given.
std::vector<HeatAxis> all_axes(const SweepSummary& summary);
// "tp", "micro_batch", "sp", or the --vary path.
std::string axis_name(const HeatAxis& axis, const SweepSummary& summary);
// The point's value as the page prints it ("4", "selective", "on", a --vary value as given);
// nullopt where the point leaves the field unset (an invalid point whose field the plan rule
// would have filled, or whose dp would have been derived).
std::optional<std::string> axis_value(const HeatAxis& axis, const PlanOutcome& o);

// Contract: "X,Y", two different names among tp, pp, dp, micro_batch (mb), virtual_stages (v),
// recompute, zero, sp (sequence_parallel) and `vary_paths`. Throws InputError naming --axes, what
// is accepted and what was found otherwise.
std::array<HeatAxis, 2> parse_heat_axes(std::string_view text, const std::vector<std::string>& vary_paths);

// Contract: the first two axes of all_axes() that take more than one value among the points;
// where fewer than two do, the first axes of that order complete the pair.
std::array<HeatAxis, 2> default_heat_axes(const SweepResult& result);

struct HeatCell {
  std::size_t simulated = 0, out_of_memory = 0, invalid = 0;
  std::size_t bounded = 0;  // --search: pruned by their compute lower bound
  // The best simulated plan (least step time or most MFU; ties: the earlier point); null when none ran.
  const PlanOutcome* best = nullptr;
  std::map<std::string, std::size_t> invalid_rules;  // rule broken -> points
};

// Cells point into the SweepResult the map was made from: it must outlive the map.
struct HeatMap {
  std::array<HeatAxis, 2> axes;  // [0] across (columns), [1] down (rows)
  HeatMetric metric = HeatMetric::StepTime;
  // The values each axis takes among the points: numbers (tp, pp, dp, micro_batch,
  // virtual_stages, zero) ascending, the others in the order of the points.
  std::vector<std::string> columns, rows;
  std::vector<HeatCell> cells;  // rows x columns, row by row
  std::size_t unplaced = 0;     // points with no value on an axis: in no cell
  double low = 0, high = 0;     // the metric's range over the cells' best plans (0, 0: none ran)
  const HeatCell& at(std::size_t row, std::size_t column) const { return cells[row * columns.size() + column]; }
};

// O(points x log(values)).
HeatMap heat_map(const SweepResult& result, const std::array<HeatAxis, 2>& axes, HeatMetric metric);

}  // namespace trnsim::explore
