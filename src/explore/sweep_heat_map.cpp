// The sweep's heat map: axes, their values and the best plan per cell (explore/sweep_heat_map.hpp).
#include "trnsim/explore/sweep_heat_map.hpp"

#include <algorithm>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "trnsim/error.hpp"

namespace trnsim::explore {
namespace {

using Field = HeatAxis::Field;

struct FieldName {
  Field field;
  std::string_view name, alias;
};
constexpr std::array<FieldName, 8> kFields{{{Field::Tp, "tp", ""},
                                            {Field::Pp, "pp", ""},
                                            {Field::Dp, "dp", ""},
                                            {Field::MicroBatch, "micro_batch", "mb"},
                                            {Field::VirtualStages, "virtual_stages", "v"},
                                            {Field::Recompute, "recompute", ""},
                                            {Field::Zero, "zero", ""},
                                            {Field::SequenceParallel, "sp", "sequence_parallel"}}};

bool numeric(Field f) { return f != Field::Recompute && f != Field::SequenceParallel && f != Field::Vary; }

template <typename T>
std::optional<std::string> text(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  if constexpr (std::is_same_v<T, bool>) return std::string(*v ? "on" : "off");
  else return fmt::format("{}", *v);
}

// The values the points take on `axis`, in the order HeatMap documents.
std::vector<std::string> axis_values(const SweepResult& result, const HeatAxis& axis) {
  std::vector<std::string> out;
  for (const PlanOutcome& o : result.outcomes) {
    const std::optional<std::string> v = axis_value(axis, o);
    if (v && std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  if (numeric(axis.field))
    std::sort(out.begin(), out.end(),
              [](const std::string& a, const std::string& b) { return std::stoll(a) < std::stoll(b); });
  return out;
}

std::size_t position(const std::vector<std::string>& values, const std::string& v) {
  return static_cast<std::size_t>(std::find(values.begin(), values.end(), v) - values.begin());
}

}  // namespace

HeatMetric parse_heat_metric(std::string_view text) {
  if (text == "step_time") return HeatMetric::StepTime;
  if (text == "mfu") return HeatMetric::Mfu;
  throw InputError(fmt::format("--metric: expected step_time or mfu, found \"{}\"", text));
}

double metric_value(HeatMetric metric, const PlanOutcome& o) {
  return metric == HeatMetric::StepTime ? o.step_time_s : o.mfu;
}

std::vector<HeatAxis> all_axes(const SweepSummary& summary) {
  std::vector<HeatAxis> out;
  for (const FieldName& f : kFields) out.push_back({f.field, 0});
  for (std::size_t k = 0; k < summary.vary_paths.size(); ++k) out.push_back({Field::Vary, k});
  return out;
}

std::string axis_name(const HeatAxis& axis, const SweepSummary& summary) {
  if (axis.field == Field::Vary) return summary.vary_paths.at(axis.vary);
  return std::string(kFields[static_cast<std::size_t>(axis.field)].name);
}

std::optional<std::string> axis_value(const HeatAxis& axis, const PlanOutcome& o) {
  switch (axis.field) {
    case Field::Tp: return text(o.tp);
    case Field::Pp: return text(o.pp);
    case Field::Dp: return text(o.dp);
    case Field::MicroBatch: return text(o.micro_batch);
    case Field::VirtualStages: return text(o.virtual_stages);
    case Field::Recompute: return o.recompute;
    case Field::Zero: return text(o.zero);
    case Field::SequenceParallel: return text(o.sequence_parallel);
    case Field::Vary: break;
  }
  if (axis.vary < o.vary.size()) return o.vary[axis.vary];
  return std::nullopt;
}

std::array<HeatAxis, 2> parse_heat_axes(std::string_view text, const std::vector<std::string>& vary_paths) {
  std::vector<std::string> accepted;
  for (const FieldName& f : kFields)
    accepted.push_back(f.alias.empty() ? std::string(f.name) : fmt::format("{} ({})", f.name, f.alias));
  const std::string expected = fmt::format(
      "two different axes X,Y among {}{}", fmt::join(accepted, ", "),
      vary_paths.empty() ? std::string(" and the --vary paths (none given)") : fmt::format(", {}", fmt::join(vary_paths, ", ")));
  const auto fail = [&](std::string_view what) -> void {
    throw InputError(fmt::format("--axes: expected {}; found \"{}\"{}", expected, text, what));
  };
  const std::size_t comma = text.find(',');
  if (comma == std::string_view::npos || text.find(',', comma + 1) != std::string_view::npos) fail("");
  std::array<HeatAxis, 2> out;
  const std::array<std::string_view, 2> names{text.substr(0, comma), text.substr(comma + 1)};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto field = std::find_if(kFields.begin(), kFields.end(), [&](const FieldName& f) {
      return names[i] == f.name || (!f.alias.empty() && names[i] == f.alias);
    });
    const auto path = std::find(vary_paths.begin(), vary_paths.end(), names[i]);
    if (field != kFields.end()) out[i] = {field->field, 0};
    else if (path != vary_paths.end()) out[i] = {Field::Vary, static_cast<std::size_t>(path - vary_paths.begin())};
    else fail(fmt::format(": no axis \"{}\"", names[i]));
  }
  if (out[0] == out[1]) fail(": the same axis twice");
  return out;
}

std::array<HeatAxis, 2> default_heat_axes(const SweepResult& result) {
  const std::vector<HeatAxis> axes = all_axes(result.summary);
  std::array<HeatAxis, 2> chosen;
  std::size_t n = 0;
  for (const HeatAxis& a : axes)
    if (n < 2 && axis_values(result, a).size() > 1) chosen[n++] = a;
  for (const HeatAxis& a : axes)
    if (n < 2 && (n == 0 || !(chosen[0] == a))) chosen[n++] = a;
  return chosen;
}

HeatMap heat_map(const SweepResult& result, const std::array<HeatAxis, 2>& axes, HeatMetric metric) {
  HeatMap map;
  map.axes = axes;
  map.metric = metric;
  map.columns = axis_values(result, axes[0]);
  map.rows = axis_values(result, axes[1]);
  map.cells.resize(map.columns.size() * map.rows.size());
  const auto better = [metric](const PlanOutcome& a, const PlanOutcome& b) {
    const double x = metric_value(metric, a), y = metric_value(metric, b);
    if (x != y) return metric == HeatMetric::StepTime ? x < y : x > y;
    return a.index < b.index;
  };
  for (const PlanOutcome& o : result.outcomes) {
    const std::optional<std::string> column = axis_value(axes[0], o), row = axis_value(axes[1], o);
    if (!column || !row) {
      ++map.unplaced;
      continue;
    }
    HeatCell& cell = map.cells[position(map.rows, *row) * map.columns.size() + position(map.columns, *column)];
    switch (o.status) {
      case PlanStatus::Invalid:
        ++cell.invalid;
        ++cell.invalid_rules[o.reason];
        break;
      case PlanStatus::OutOfMemory: ++cell.out_of_memory; break;
      case PlanStatus::Pruned: ++cell.bounded; break;
      case PlanStatus::Simulated:
        ++cell.simulated;
        if (!cell.best || better(o, *cell.best)) cell.best = &o;
        break;
    }
  }
  bool any = false;
  for (const HeatCell& cell : map.cells) {
    if (!cell.best) continue;
    const double v = metric_value(metric, *cell.best);
    map.low = any ? std::min(map.low, v) : v;
    map.high = any ? std::max(map.high, v) : v;
    any = true;
  }
  return map;
}

}  // namespace trnsim::explore
