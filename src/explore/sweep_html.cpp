// The sweep's HTML page (explore/sweep_html.hpp): what ran, the heat map, the ranked plans and
// the pruned ones. Everything is inline; the page loads nothing.
#include "trnsim/explore/sweep_html.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "trnsim/explore/sweep_report.hpp"
#include "trnsim/report/writers/html_markup.hpp"

namespace trnsim::explore {
namespace {

using report::html::escape;
namespace html = report::html;

constexpr std::string_view kSweepStyle = R"(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px auto;max-width:1400px;padding:0 16px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
dl.sweep{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0;font-size:14px}dl.sweep dt{color:#666}dl.sweep dd{margin:0}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:14px 0}.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:130px}
.card .label{font-size:12px;color:#666}.card .value{font-size:22px;font-weight:600}
.note{font-size:12px;color:#666;margin:4px 0}.legend{font-size:12px;margin:8px 0;display:flex;align-items:center;gap:6px;flex-wrap:wrap}
.ramp{display:inline-flex}.ramp span{display:inline-block;width:22px;height:14px}.key{margin-left:18px;white-space:nowrap}.sw{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}td.num{text-align:right;font-variant-numeric:tabular-nums}
table.heat td.cell{width:96px;height:40px;text-align:center;border:2px solid #fff;font-variant-numeric:tabular-nums}table.heat th{text-align:center}
table.heat td.pruned{background:#d9d9d9;color:#555;font-size:12px}table.heat td.empty{color:#aaa;border:1px dashed #ccc}
td.why,tr.finding td{white-space:normal}tr.finding td{font-size:12px;color:#555;padding-bottom:8px}tr.plan td{border-bottom:none}code{background:#f4f4f4;padding:0 4px;border-radius:3px}
div.wide{overflow-x:auto}
footer{margin-top:30px;font-size:12px;color:#888}
</style>
)";
constexpr std::string_view kPrunedColour = "#d9d9d9";

// Viridis at 0, 1/4, 1/2, 3/4 and 1 (matplotlib's table): from the worst cell (dark purple) to
// the best (yellow), readable in grey and by the colour-blind.
constexpr std::array<std::array<double, 3>, 5> kRamp{{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};

// `goodness` in [0, 1]: 1 the best value of the map.
std::string ramp_colour(double goodness) {
  const double x = std::clamp(goodness, 0.0, 1.0) * (kRamp.size() - 1);
  const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(x), kRamp.size() - 2);
  const double f = x - static_cast<double>(i);
  std::array<long, 3> c{};
  for (std::size_t k = 0; k < 3; ++k) c[k] = std::lround(kRamp[i][k] + f * (kRamp[i + 1][k] - kRamp[i][k]));
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

double goodness(const HeatMap& map, double v) {
  if (!(map.high > map.low)) return 1;
  return map.metric == HeatMetric::StepTime ? (map.high - v) / (map.high - map.low) : (v - map.low) / (map.high - map.low);
}

std::string metric_text(HeatMetric metric, double v) {
  return metric == HeatMetric::StepTime ? html::human_seconds(v) : html::percent(v);
}

// "point 5: tp 2, pp 1, dp 1, ...": every axis the point sets.
std::string plan_label(const PlanOutcome& o, const SweepSummary& s) {
  std::string out = fmt::format("point {}:", o.index);
  const char* sep = " ";
  for (const HeatAxis& a : all_axes(s)) {
    if (const auto v = axis_value(a, o)) {
      out += fmt::format("{}{} {}", sep, axis_name(a, s), *v);
      sep = ", ";
    }
  }
  return out;
}

// "3 invalid (2 tp does not divide heads, 1 ...), 1 out of memory".
std::string pruned_text(const HeatCell& cell) {
  std::string out;
  if (cell.invalid > 0) {
    std::string rules;
    for (const auto& [rule, n] : rules_by_count(cell.invalid_rules)) rules += fmt::format("{}{} {}", rules.empty() ? "" : "; ", n, rule);
    out += fmt::format("{} invalid ({})", cell.invalid, rules);
  }
  if (cell.out_of_memory > 0) out += fmt::format("{}{} out of memory", out.empty() ? "" : ", ", cell.out_of_memory);
  if (cell.bounded > 0)
    out += fmt::format("{}{} pruned by their compute lower bound", out.empty() ? "" : ", ", cell.bounded);
  return out;
}

std::string heat_cell(const HeatMap& map, const HeatCell& cell, const std::string& where, const SweepSummary& s) {
  if (cell.best) {
    const PlanOutcome& b = *cell.best;
    const double g = goodness(map, metric_value(map.metric, b));
    std::string title = fmt::format("{}: best of {} simulated: {}, MFU {}, {} tokens/s; {}", where, cell.simulated,
                                    html::human_seconds(b.step_time_s), html::percent(b.mfu),
                                    html::grouped(b.tokens_per_s), plan_label(b, s));
    if (cell.invalid + cell.out_of_memory + cell.bounded > 0) title += "; also " + pruned_text(cell);
    return fmt::format(R"(<td class="cell" style="background:{};color:{}" title="{}">{}</td>)", ramp_colour(g),
                       g > 0.55 ? "#222" : "#fff", escape(title), escape(metric_text(map.metric, metric_value(map.metric, b))));
  }
  if (cell.invalid + cell.out_of_memory + cell.bounded == 0)
    return fmt::format(R"(<td class="cell empty" title="{}">no point</td>)", escape(where + ": no point has these values"));
  const int kinds = (cell.invalid > 0) + (cell.out_of_memory > 0) + (cell.bounded > 0);
  const char* label = kinds > 1                ? "not run"
                      : cell.invalid > 0       ? "invalid"
                      : cell.out_of_memory > 0 ? "out of memory"
                                               : "bound";
  return fmt::format(R"(<td class="cell pruned" title="{}">{}</td>)", escape(where + ": none ran: " + pruned_text(cell)),
                     label);
}

std::string heat_section(const SweepResult& result, const HeatMap& map) {
  const SweepSummary& s = result.summary;
  const std::string x = axis_name(map.axes[0], s), y = axis_name(map.axes[1], s);
  const bool time = map.metric == HeatMetric::StepTime;
  std::string out = "<section id=\"heatmap\"><h2>" +
                    escape(fmt::format("Best {} by {} and {}", time ? "step time" : "MFU", x, y)) + "</h2>\n";
  out += "<p class=\"note\">" +
         escape(fmt::format("Each cell: the {} of the simulated plans with these values of {} (across) and {} (down), "
                            "over all the other axes; hover over a cell for its plan. Grey: no plan with these values ran.",
                            time ? "fastest" : "highest MFU", x, y)) +
         "</p>\n";
  if (map.unplaced > 0)
    out += "<p class=\"note\">" +
           escape(fmt::format("{} invalid points leave {} or {} unset (the plan rule or dp derivation would have "
                              "filled it) and are in no cell; they are listed under the pruned plans.",
                              map.unplaced, x, y)) +
           "</p>\n";
  out += "<div class=\"legend\">";
  if (map.high >= map.low && std::any_of(map.cells.begin(), map.cells.end(), [](const HeatCell& c) { return c.best; })) {
    // Eleven steps from the least value (left) to the most.
    out += "<span id=\"scale-min\">" + escape(metric_text(map.metric, map.low)) + "</span><span class=\"ramp\">";
    for (int k = 0; k <= 10; ++k)
      out += fmt::format(R"(<span style="background:{}"></span>)",
                         ramp_colour(goodness(map, map.low + (map.high - map.low) * k / 10.0)));
    out += "</span><span id=\"scale-max\">" + escape(metric_text(map.metric, map.high)) + "</span>";
    out += "<span class=\"key\">" + escape(time ? "(least: best)" : "(most: best)") + "</span>";
  }
  out += html::swatch(kPrunedColour, "none ran: invalid or out of memory") + "</div>\n";
  out += "<table class=\"heat\"><tr><th>" + escape(y + " \\ " + x) + "</th>";
  for (const std::string& c : map.columns) out += "<th>" + escape(c) + "</th>";
  out += "</tr>\n";
  for (std::size_t r = 0; r < map.rows.size(); ++r) {
    out += "<tr><th>" + escape(map.rows[r]) + "</th>";
    for (std::size_t c = 0; c < map.columns.size(); ++c)
      out += heat_cell(map, map.at(r, c), fmt::format("{} {}, {} {}", x, map.columns[c], y, map.rows[r]), s);
    out += "</tr>\n";
  }
  return out + "</table></section>\n";
}

// The point and its axis values, as table cells ("-" where unset).
std::string plan_cells(const PlanOutcome& o, const std::vector<HeatAxis>& axes) {
  std::string out = fmt::format(R"(<td class="num">{}</td>)", o.index);
  for (const HeatAxis& a : axes) out += "<td>" + escape(axis_value(a, o).value_or("-")) + "</td>";
  return out;
}

// Short heads (mb, v) keep the wide tables narrower.
std::string axis_heads(const SweepSummary& s, const std::vector<HeatAxis>& axes) {
  std::string out = "<th>point</th>";
  for (const HeatAxis& a : axes) {
    const std::string name = a.field == HeatAxis::Field::MicroBatch      ? "mb"
                             : a.field == HeatAxis::Field::VirtualStages ? "v"
                                                                         : axis_name(a, s);
    out += "<th>" + escape(name) + "</th>";
  }
  return out;
}

std::string ranked_section(const SweepResult& result, const std::vector<const PlanOutcome*>& best) {
  const std::vector<HeatAxis> axes = all_axes(result.summary);
  std::string out = "<section id=\"ranked\"><h2>" + escape(fmt::format("Ranked plans ({} simulated)", best.size())) +
                    "</h2>\n<p class=\"note\">Fastest first (ties: the earlier point); the breakdown is the bottleneck "
                    "rank's, its parts adding up to the step time; under each plan, its main finding.</p>\n";
  if (best.empty()) return out + "<p>No plan ran.</p></section>\n";
  out += "<div class=\"wide\"><table><tr><th>#</th>" + axis_heads(result.summary, axes) +
         "<th>step time</th><th>tokens/s</th><th>MFU</th><th>peak memory</th>";
  for (int p = 0; p < report::kPartCount; ++p)
    out += "<th>" + html::swatch(html::kPartColour[p], kPartHeads[static_cast<std::size_t>(p)]) + "</th>";
  out += "</tr>\n";
  const std::size_t columns = 2 + axes.size() + 4 + report::kPartCount;
  for (std::size_t k = 0; k < best.size(); ++k) {
    const PlanOutcome& o = *best[k];
    out += fmt::format(R"(<tr class="plan" id="plan-{}"><td class="num">{}</td>)", o.index, k + 1) + plan_cells(o, axes);
    // The exact value rides along in data-seconds (shortest round-trip form, as in the JSON).
    out += fmt::format(R"(<td class="num" data-seconds="{}">{}</td>)", o.step_time_s, escape(html::human_seconds(o.step_time_s)));
    for (const std::string& v : {html::grouped(o.tokens_per_s), html::percent(o.mfu), html::human_bytes(o.peak_memory_bytes)})
      out += "<td class=\"num\">" + escape(v) + "</td>";
    for (double part : o.breakdown) out += "<td class=\"num\">" + escape(html::human_seconds(part)) + "</td>";
    // The main finding on a line of its own, under the figures, as in the text table.
    out += fmt::format(R"(</tr>{}<tr class="finding"><td></td><td colspan="{}">)", '\n', columns - 1);
    out += o.finding_rule.empty() ? std::string("no finding")
                                  : "<code>" + escape(o.finding_rule) + "</code> " + escape(o.finding);
    out += "</td></tr>\n";
  }
  return out + "</table></div></section>\n";
}

std::string pruned_section(const SweepResult& result, std::size_t simulated) {
  const std::vector<HeatAxis> axes = all_axes(result.summary);
  std::map<std::string, std::size_t> rules;
  for (const PlanOutcome& o : result.outcomes)
    if (o.status == PlanStatus::Invalid) ++rules[o.reason];
  const std::size_t pruned = result.outcomes.size() - simulated;
  std::string out = "<section id=\"pruned\"><h2>" + escape(fmt::format("Pruned plans ({} not simulated)", pruned)) + "</h2>\n";
  if (pruned == 0) return out + "<p>None: every point ran.</p></section>\n";
  if (!rules.empty()) {
    out += "<p class=\"note\">Invalid, by rule:</p><ul class=\"note\">";
    for (const auto& [rule, n] : rules_by_count(rules)) out += "<li>" + escape(fmt::format("{} {}", n, rule)) + "</li>";
    out += "</ul>\n";
  }
  out += "<div class=\"wide\"><table><tr>" + axis_heads(result.summary, axes) + "<th>status</th><th>reason</th><th>detail</th></tr>\n";
  for (const PlanOutcome& o : result.outcomes) {
    if (o.status == PlanStatus::Simulated) continue;
    const bool oom = o.status == PlanStatus::OutOfMemory;
    const std::string reason = oom ? o.detail : o.reason;
    const std::string detail = oom ? fmt::format("peak {} per rank, capacity {}", html::human_bytes(o.peak_memory_bytes),
                                                 html::human_bytes(o.capacity_bytes))
                               : o.detail != o.reason ? o.detail
                                                      : std::string();
    out += "<tr>" + plan_cells(o, axes) + "<td>" + escape(status_name(o.status)) + "</td><td class=\"why\">" +
           escape(reason) + "</td><td class=\"why\">" + escape(detail) + "</td></tr>\n";
  }
  return out + "</table></div></section>\n";
}

std::string card(std::string_view label, std::string_view value_html) {
  return fmt::format(R"(<div class="card"><div class="label">{}</div><div class="value">{}</div></div>)", escape(label),
                     value_html);
}

std::string headline(const SweepResult& result, const std::vector<const PlanOutcome*>& best) {
  const SweepSummary& s = result.summary;
  std::size_t invalid = 0, oom = 0, bounded = 0;
  for (const PlanOutcome& o : result.outcomes) {
    invalid += o.status == PlanStatus::Invalid ? 1 : 0;
    oom += o.status == PlanStatus::OutOfMemory ? 1 : 0;
    bounded += o.status == PlanStatus::Pruned ? 1 : 0;
  }
  std::string out = "<dl class=\"sweep\">";
  const auto item = [&out](std::string_view term, const std::string& text) {
    out += "<dt>" + escape(term) + "</dt><dd>" + escape(text) + "</dd>";
  };
  item("experiment", s.experiment);
  item("points", s.search ? fmt::format("{} searched: {} invalid, {} out of memory, {} pruned by their compute lower "
                                        "bound, {} simulated",
                                        result.outcomes.size(), invalid, oom, bounded, best.size())
                          : fmt::format("{} enumerated: {} invalid, {} out of memory, {} simulated",
                                        result.outcomes.size(), invalid, oom, best.size()));
  if (s.shards > 1) item("shard", fmt::format("{}/{}: {} of the sweep's {} points", s.shard, s.shards, result.outcomes.size(), s.points));
  if (!best.empty()) item("best plan", plan_label(*best.front(), s));
  out += "</dl>\n";
  if (best.empty()) return out;
  const PlanOutcome& b = *best.front();
  out += "<div class=\"cards\">";
  out += card("best step time", fmt::format(R"(<span id="best-step-time" data-seconds="{}">{}</span>)", b.step_time_s,
                                            escape(html::human_seconds(b.step_time_s))));
  out += card("its tokens/s", escape(html::grouped(b.tokens_per_s)));
  out += card("its MFU", escape(html::percent(b.mfu)));
  return out + "</div>\n";
}

}  // namespace

std::string sweep_html(const SweepResult& result, const SweepHtmlOptions& options) {
  const SweepSummary& s = result.summary;
  const std::vector<const PlanOutcome*> best = ranked(result);
  const HeatMap map = heat_map(result, options.axes.value_or(default_heat_axes(result)), options.metric);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>" + escape("trnsim sweep: " + s.title) + "</title>\n";
  out += kSweepStyle;
  out += "</head>\n<body>\n<h1>" + escape("Sweep: " + s.title) + "</h1>\n";
  out += headline(result, best);
  out += heat_section(result, map);
  out += ranked_section(result, best);
  out += pruned_section(result, best.size());
  out += "<footer>" + escape(fmt::format("trnsim sweep of {}.", s.experiment)) + "</footer>\n";
  return out + "</body>\n</html>\n";
}

}  // namespace trnsim::explore
