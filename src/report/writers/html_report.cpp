// The HTML report page: styles, the headline figures, the breakdown, then the sections of
// html_sections.hpp and the findings. Everything is inline; the page loads nothing.
#include "trnsim/report/writers/html_report.hpp"

#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "html_sections.hpp"
#include "plan_text.hpp"
#include "trnsim/report/writers/html_markup.hpp"

namespace trnsim::report {
namespace {

using html::escape;

constexpr std::string_view kStyle = R"(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:14px;margin:16px 0 6px}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0;font-size:14px}dl.run dt{color:#666}dl.run dd{margin:0}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:14px 0}.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:130px}
.card .label{font-size:12px;color:#666}.card .value{font-size:22px;font-weight:600}.card .sub{font-size:11px;color:#888}
svg.chart{width:100%;height:auto;display:block;font-size:11px}svg text{fill:#333}svg text.tick{fill:#666;font-size:10px}svg text.bad{fill:#c00;font-weight:600}
line.grid{stroke:#e4e4e4;stroke-width:1}line.capacity{stroke:#c00;stroke-width:2;stroke-dasharray:3 2}
.legend{font-size:12px;margin:6px 0}.key{margin-right:14px;white-space:nowrap}.sw{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
.sw.cap{background:none;border-left:2px dashed #c00;width:4px}
.note{font-size:12px;color:#666;margin:4px 0}
table{border-collapse:collapse;font-size:13px;margin:6px 0}th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{color:#c00}.meter{display:inline-block;width:120px;height:9px;background:#eee;vertical-align:middle}.meter span{display:block;height:9px;background:#4c78a8}
ul.findings li,ol.findings li{margin:4px 0;font-size:14px}code{background:#f4f4f4;padding:0 4px;border-radius:3px}
footer{margin-top:30px;font-size:12px;color:#888}
</style>
)";

std::string card(std::string_view label, std::string_view value_html, std::string_view sub) {
  return fmt::format(R"(<div class="card"><div class="label">{}</div><div class="value">{}</div><div class="sub">{}</div></div>)",
                     escape(label), value_html, escape(sub));
}

std::string headline(const replay::StepInput& input, const StepReport& r) {
  std::string out = "<dl class=\"run\">";
  auto item = [&out](std::string_view term, const std::string& text) {
    out += "<dt>" + escape(term) + "</dt><dd>" + escape(text) + "</dd>";
  };
  item("model", fmt::format("{} ({:.2f} B parameters), sequence {} x global batch {}", r.model, r.parameters / 1e9,
                            r.seq_len, r.global_batch));
  item("cluster", fmt::format("{} x {} ({} chips, {} ranks), {} network model", r.instances, r.instance, r.chips,
                              r.ranks, r.network));
  item("plan", plan_text(r.plan));
  item("peak", fmt::format("{:.1f} PFLOP/s dense for the training dtype, {} x {}", r.peak_flops / 1e15, r.chips,
                           input.cluster.instance.chip.name));
  out += "</dl>\n<div class=\"cards\">";
  // The exact value rides along in data-seconds (shortest round-trip form, as in the JSON report).
  out += card("step time",
              fmt::format(R"(<span id="step-time" data-seconds="{}">{}</span>)", r.step_time_s,
                          escape(html::human_seconds(r.step_time_s))),
              "one optimizer step");
  out += card("tokens/s", escape(html::grouped(r.tokens_per_s)), fmt::format("seq {}", r.seq_len));
  out += card("sequences/s", fmt::format("{:.2f}", r.sequences_per_s), fmt::format("global batch {}", r.global_batch));
  out += card("MFU", escape(html::percent(r.mfu)), fmt::format("model {:.3e} FLOP/step", r.model_flops));
  out += card("HFU", escape(html::percent(r.hfu)), fmt::format("executed {:.3e} FLOP/step", r.hardware_flops));
  return out + "</div>\n";
}

std::string breakdown_section(const StepReport& r) {
  constexpr double kWidth = 1000, kHeight = 30;
  std::string out = fmt::format(
      "<section id=\"breakdown\"><h2>Where the step time goes</h2>\n<p class=\"note\">The bottleneck rank {} (stage "
      "{}): every instant of the step is charged to one part, so the parts add up to the step time.</p>\n",
      r.breakdown.rank, r.bottleneck_stage);
  out += fmt::format(R"(<svg class="chart" viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="breakdown">)", kWidth,
                     kHeight);
  double x = 0;
  for (int i = 0; i < kPartCount; ++i) {
    const double s = r.breakdown.seconds[static_cast<std::size_t>(i)];
    const double w = r.step_time_s > 0 ? s / r.step_time_s * kWidth : 0;
    if (w <= 0) continue;
    out += html::svg_rect(x, 0, w, kHeight, html::kPartColour[i],
                          fmt::format("{} {} ({})", part_name(static_cast<Part>(i)), html::human_seconds(s),
                                      html::percent(s / r.step_time_s)));
    x += w;
  }
  out += "</svg>\n<table><tr><th>part</th><th>time</th><th>share</th></tr>\n";
  for (int i = 0; i < kPartCount; ++i) {
    const double s = r.breakdown.seconds[static_cast<std::size_t>(i)];
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       html::swatch(html::kPartColour[i], part_name(static_cast<Part>(i))),
                       escape(html::human_seconds(s)), html::percent(r.step_time_s > 0 ? s / r.step_time_s : 0));
  }
  std::vector<std::string> engines;
  for (int e = 0; e < cost::kEngineCount; ++e) {
    engines.push_back(fmt::format("{} {}", engine_name(static_cast<cost::Engine>(e)),
                                  escape(html::human_seconds(r.engine_busy[static_cast<std::size_t>(e)]))));
  }
  return out + fmt::format("</table>\n<p class=\"note\">Engine busy time of that rank (cost model): {}.</p></section>\n",
                           fmt::join(engines, ", "));
}

std::string findings_section(const StepReport& r) {
  std::string out = "<section id=\"findings\"><h2>Findings</h2>\n";
  if (r.findings.empty()) {
    out += "<p>No findings.</p>\n";
  } else {
    // Ranked by the step time they cost (report/analysis/findings.hpp).
    out += "<ol class=\"findings\">\n";
    for (const auto& f : r.findings) {
      out += "<li><code>" + escape(f.rule) + "</code> ";
      if (f.seconds > 0) {
        out += "<b>" + escape(fmt::format("{} ({:.1f} % of the step)", html::human_seconds(f.seconds),
                                          r.step_time_s > 0 ? 100 * f.seconds / r.step_time_s : 0.0)) +
               "</b> ";
      }
      out += escape(f.message);
      if (!f.suggestion.empty()) out += "<div><i>" + escape(f.suggestion) + "</i></div>";
      out += "</li>\n";
    }
    out += "</ol>\n";
  }
  const CriticalPath& cp = r.critical_path;
  if (cp.length_s > 0) {
    out += "<h3>Critical path</h3>\n<p>" +
           escape(fmt::format("{} segments, {} long (the step time); by category:", cp.segment_count,
                              html::human_seconds(cp.length_s))) +
           "</p>\n<table><tr><th>category</th><th>seconds</th><th>%</th></tr>\n";
    for (int i = 0; i < kPathCategoryCount; ++i) {
      const double s = cp.seconds[static_cast<std::size_t>(i)];
      if (!(s > 0)) continue;
      out += fmt::format("<tr><td>{}</td><td>{:.4g}</td><td>{:.1f}</td></tr>\n",
                         escape(std::string(path_category_name(static_cast<PathCategory>(i)))), s,
                         100 * s / cp.length_s);
    }
    out += "</table>\n";
  }
  if (!r.choices.empty()) {
    out += "<h3>Unset fields chosen</h3>\n<ul class=\"findings\">\n";
    for (const auto& c : r.choices) out += "<li>" + escape(c) + "</li>\n";
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

}  // namespace

std::string format_html(const replay::StepInput& input, const replay::StepRun& run, const StepReport& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>" + escape(fmt::format("trnsim: {} on {} x {}", r.model, r.instances, r.instance)) + "</title>\n";
  out += kStyle;
  out += "</head>\n<body>\n<h1>" + escape(fmt::format("{} on {} x {}", r.model, r.instances, r.instance)) + "</h1>\n";
  out += headline(input, r);
  out += breakdown_section(r);
  out += html::gantt_section(run);
  out += html::memory_section(r);
  out += html::links_section(run, r.step_time_s);
  out += findings_section(r);
  out += fmt::format("<footer>trnsim: simulated {} of {} ranks, {} tasks, {} events.</footer>\n", r.simulated_ranks,
                     r.ranks, html::grouped(static_cast<double>(r.tasks)), html::grouped(static_cast<double>(r.events)));
  return out + "</body>\n</html>\n";
}

}  // namespace trnsim::report
