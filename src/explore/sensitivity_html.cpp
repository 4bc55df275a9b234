// sensitivity's page (explore/sensitivity_report.hpp): the elasticities as bars around 0, the
// table and the capacity search, self-contained (inline CSS and SVG, no script).
#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "trnsim/explore/sensitivity_report.hpp"
#include "trnsim/report/writers/html_markup.hpp"

namespace trnsim::explore {
namespace {

namespace html = report::html;

constexpr std::string_view kStyle = R"(<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.axis { stroke: #444; stroke-width: 1; }
svg text { font-size: 12px; }
</style>
)";

// One bar per figure, in the result's order: left of the axis when a larger figure shortens the
// step (negative elasticity), right when it lengthens it; the scale is the largest |elasticity|
// (at least 1, so that -1 is always a full-width reference).
std::string bars(const SensitivityResult& r) {
  constexpr double kLabel = 240, kHalf = 220, kRow = 22;
  double scale = 1;
  for (const FigureResponse& f : r.figures) scale = std::max(scale, std::abs(f.elasticity));
  const double height = kRow * static_cast<double>(r.figures.size()) + 24;
  const double axis = kLabel + kHalf;
  std::string out = fmt::format(R"(<svg width="{:.0f}" height="{:.0f}" role="img">)", kLabel + 2 * kHalf + 60, height);
  for (std::size_t i = 0; i < r.figures.size(); ++i) {
    const FigureResponse& f = r.figures[i];
    const double y = kRow * static_cast<double>(i);
    const double w = kHalf * std::abs(f.elasticity) / scale;
    const double x = f.elasticity < 0 ? axis - w : axis;
    out += html::svg_text(kLabel - 8, y + 15, f.name, "end");
    out += html::svg_rect(x, y + 4, w, kRow - 8, f.elasticity < 0 ? "#4c78a8" : "#e45756",
                          fmt::format("{}: elasticity {:.3f}, step {:+.2f} %", f.name, f.elasticity, 100 * f.change));
    out += html::svg_text(f.elasticity < 0 ? axis + 6 : axis - 6, y + 15, fmt::format("{:.3f}", f.elasticity),
                          f.elasticity < 0 ? "start" : "end");
  }
  out += html::svg_line(axis, 0, axis, height - 20, "axis");
  out += html::svg_text(axis - kHalf, height - 6, fmt::format("{:.2f}", -scale), "middle");
  out += html::svg_text(axis, height - 6, "0", "middle");
  out += html::svg_text(axis + kHalf, height - 6, fmt::format("{:.2f}", scale), "middle");
  return out + "</svg>\n";
}

std::string capacity_row(const CapacityPoint& c, double base_step_s) {
  if (!c.best) return fmt::format("<tr><td>{:g} GiB</td><td>{}</td><td>-</td><td>-</td><td>none runs</td></tr>\n",
                                  c.hbm_GiB, c.fit);
  const PlanOutcome& b = *c.best;
  return fmt::format("<tr><td>{:g} GiB</td><td>{}</td><td>{:.6g} s</td><td>{:+.2f} %</td><td>{}</td></tr>\n",
                     c.hbm_GiB, c.fit, b.step_time_s, 100 * (b.step_time_s / base_step_s - 1),
                     html::escape(fmt::format("tp {}, pp {}, dp {}, micro-batch {}, recompute {}", b.tp.value_or(0),
                                              b.pp.value_or(0), b.dp.value_or(0), b.micro_batch.value_or(0),
                                              b.recompute.value_or("-"))));
}

}  // namespace

std::string sensitivity_html(const SensitivityResult& r) {
  const double t = r.base.step_time_s;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>sensitivity: {}</title>\n", html::escape(r.title));
  out += std::string(kStyle) + "</head>\n<body>\n";
  out += fmt::format("<h1>Sensitivity: {}</h1>\n", html::escape(r.title));
  out += fmt::format("<p>Base step time <span id=\"base-step-time\" data-seconds=\"{}\">{}</span>. Each figure {} "
                     "by {:+g} % in turn; elasticity = ln(t'/t) / ln(x'/x): -1, the step time inversely proportional "
                     "to the figure; 0, independent of it.</p>\n",
                     t, html::escape(html::human_seconds(t)), r.step > 0 ? "raised" : "lowered", 100 * r.step);
  out += bars(r);
  out += "<table id=\"figures\">\n<tr><th>figure</th><th>base</th><th>new</th><th>step time</th><th>change</th>"
         "<th>elasticity</th></tr>\n";
  for (const FigureResponse& f : r.figures)
    out += fmt::format("<tr><td>{}</td><td>{:.6g} {}</td><td>{:.6g}</td><td>{:.6g} s</td><td>{:+.2f} %</td>"
                       "<td>{:.3f}</td></tr>\n",
                       html::escape(f.name), f.base_value, html::escape(f.unit), f.new_value, f.step_time_s,
                       100 * f.change, f.elasticity);
  out += "</table>\n";
  if (!r.skipped.empty()) {
    out += "<h2>Skipped</h2>\n<ul>\n";
    for (const SkippedFigure& s : r.skipped)
      out += fmt::format("<li>{}: {}</li>\n", html::escape(s.name), html::escape(s.reason));
    out += "</ul>\n";
  }
  const CapacitySearch& c = r.capacity;
  out += fmt::format("<h2>HBM capacity</h2>\n<p>The same plan runs as fast at any capacity; the plans that fit, "
                     "from the grid {} ({} plans, {} invalid at any capacity):</p>\n",
                     html::escape(c.grid), c.plans, c.invalid);
  out += "<table>\n<tr><th>HBM per chip</th><th>plans that fit</th><th>fastest</th><th>against the plan</th>"
         "<th>its plan</th></tr>\n";
  out += capacity_row(c.base, t) + capacity_row(c.raised, t);
  return out + "</table>\n</body>\n</html>\n";
}

}  // namespace trnsim::explore
