// sensitivity's text table and JSON (explore/sensitivity_report.hpp).
#include "trnsim/explore/sensitivity_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "trnsim/explore/sweep_json.hpp"

namespace trnsim::explore {
namespace {

const char* const kKind = "trnsim-sensitivity";
constexpr int kSchemaVersion = 1;
const char* const kDefinition = "ln(t'/t) / ln(x'/x)";

// "tp 8, pp 1, dp 8, micro-batch 1, virtual stages 1, 1f1b, recompute selective, zero 1, sp on"
std::string plan_text(const PlanOutcome& o) {
  return fmt::format("tp {}, pp {}, dp {}, micro-batch {}, virtual stages {}, {}, recompute {}, zero {}, sp {}",
                     o.tp.value_or(0), o.pp.value_or(0), o.dp.value_or(0), o.micro_batch.value_or(0),
                     o.virtual_stages.value_or(0), o.schedule.value_or("-"), o.recompute.value_or("-"),
                     o.zero.value_or(0), o.sequence_parallel.value_or(false) ? "on" : "off");
}

// A percentage with its sign: "+10 %", "-0.5 %", "+100 %".
std::string signed_percent(double fraction) { return fmt::format("{:+g} %", 100 * fraction); }

std::string capacity_line(const CapacityPoint& c, double base_step_s) {
  std::string out = fmt::format("  at {:g} GiB per chip: {} fit", c.hbm_GiB, c.fit);
  if (!c.best) return out + ", none runs\n";
  return out + fmt::format("; fastest {:.6g} s ({:+.2f} % against the experiment's plan): {}\n", c.best->step_time_s,
                           100 * (c.best->step_time_s / base_step_s - 1), plan_text(*c.best));
}

nlohmann::json capacity_json(const CapacityPoint& c) {
  nlohmann::json j{{"hbm_GiB", c.hbm_GiB}, {"fit", c.fit}};
  if (c.best) j["best"] = to_json(*c.best);
  return j;
}

}  // namespace

std::string format_sensitivity(const SensitivityResult& r) {
  const double t = r.base.step_time_s;
  std::string out = fmt::format("sensitivity: {}\n", r.title);
  out += fmt::format("plan: {}\n", plan_text(r.base));
  out += fmt::format("base step time: {:.6g} s\n", t);
  out += fmt::format("each figure {} by {} in turn; elasticity = {} (-1: the step time is inversely "
                     "proportional to the figure, 0: it does not depend on it)\n\n",
                     r.step > 0 ? "raised" : "lowered", signed_percent(r.step), kDefinition);
  std::size_t name_width = 6;
  for (const FigureResponse& f : r.figures) name_width = std::max(name_width, f.name.size());
  out += fmt::format("{:<{}}  {:>22}  {:>12}  {:>13}  {:>9}  {:>10}\n", "figure", name_width, "base", "new",
                     "step time (s)", "change", "elasticity");
  for (const FigureResponse& f : r.figures)
    out += fmt::format("{:<{}}  {:>22}  {:>12.6g}  {:>13.6g}  {:>7.2f} %  {:>10.3f}\n", f.name, name_width,
                       fmt::format("{:.6g} {}", f.base_value, f.unit), f.new_value, f.step_time_s, 100 * f.change,
                       f.elasticity);
  bool capped = false;
  for (const FigureResponse& f : r.figures) {
    if (f.capped_by.empty()) continue;
    if (!capped) out += "\ncapped (raised alone, the figure stops at the one that caps it; the '+' rows raise both):\n";
    capped = true;
    out += fmt::format("  {}: capped by {}\n", f.name, f.capped_by);
  }
  if (!r.skipped.empty()) {
    out += "\nskipped:\n";
    for (const SkippedFigure& s : r.skipped) out += fmt::format("  {}: {}\n", s.name, s.reason);
  }
  const CapacitySearch& c = r.capacity;
  out += fmt::format("\nHBM capacity {:g} -> {:g} GiB per chip: the same plan runs as fast as before; the plans "
                     "that fit, from the grid {} ({} plans, {} invalid at any capacity):\n",
                     c.base.hbm_GiB, c.raised.hbm_GiB, c.grid, c.plans, c.invalid);
  out += capacity_line(c.base, t);
  out += capacity_line(c.raised, t);
  return out;
}

nlohmann::json to_json(const SensitivityResult& r) {
  nlohmann::json figures = nlohmann::json::array();
  for (const FigureResponse& f : r.figures)
    figures.push_back({{"name", f.name},
                       {"unit", f.unit},
                       {"paths", f.paths},
                       {"capped_by", f.capped_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.capped_by)},
                       {"base_value", f.base_value},
                       {"new_value", f.new_value},
                       {"step_time_s", f.step_time_s},
                       {"change", f.change},
                       {"elasticity", f.elasticity}});
  nlohmann::json skipped = nlohmann::json::array();
  for (const SkippedFigure& s : r.skipped) skipped.push_back({{"name", s.name}, {"reason", s.reason}});
  const CapacitySearch& c = r.capacity;
  return {{"kind", kKind},
          {"schema_version", kSchemaVersion},
          {"experiment", r.experiment},
          {"title", r.title},
          {"step", r.step},
          {"elasticity", kDefinition},
          {"base", to_json(r.base)},
          {"figures", figures},
          {"skipped", skipped},
          {"capacity",
           {{"grid", c.grid}, {"plans", c.plans}, {"invalid", c.invalid}, {"base", capacity_json(c.base)},
            {"raised", capacity_json(c.raised)}}}};
}

}  // namespace trnsim::explore
