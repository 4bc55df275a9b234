// The memory section of the HTML report: per pipeline stage, one bar stacked by term with the
// rank's capacity marked, and the same figures as a table.
#include <algorithm>
#include <array>

#include <fmt/core.h>

#include "html_sections.hpp"
#include "trnsim/report/writers/html_markup.hpp"

namespace trnsim::report::html {
namespace {

constexpr double kLabelWidth = 70, kBarWidth = 820, kBarHeight = 16, kBarGap = 8, kBarsTop = 6;
constexpr std::array<std::string_view, 6> kTermName{"weights", "gradients", "optimizer states", "activations",
                                                    "embedding/logits", "workspace"};

std::array<double, 6> terms_of(const workload::StageMemory& m) {
  return {m.weights, m.gradients, m.optimizer, m.activations, m.embedding_logits, m.workspace};
}

}  // namespace

std::string memory_section(const StepReport& report) {
  std::string out = "<section id=\"memory\"><h2>Memory per rank</h2>\n";
  if (report.memory.empty()) return out + "<p>No memory estimate.</p></section>\n";
  double scale = 0;  // bytes at the right end of the bars
  for (const auto& m : report.memory) scale = std::max({scale, m.memory.total(), m.capacity});
  scale *= 1.02;
  const double height = kBarsTop + static_cast<double>(report.memory.size()) * (kBarHeight + kBarGap) + 4;
  out += fmt::format(R"(<svg class="chart" viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="memory per stage">)",
                     kLabelWidth + kBarWidth + 230, height);
  for (std::size_t i = 0; i < report.memory.size(); ++i) {
    const auto& m = report.memory[i];
    const double y = kBarsTop + static_cast<double>(i) * (kBarHeight + kBarGap);
    out += fmt::format(R"(<g class="memory-bar" data-stage="{}">)", m.memory.stage);
    out += svg_text(kLabelWidth - 8, y + 12, fmt::format("stage {}", m.memory.stage), "end");
    double x = kLabelWidth;
    const auto terms = terms_of(m.memory);
    for (std::size_t t = 0; t < terms.size(); ++t) {
      const double w = terms[t] / scale * kBarWidth;
      if (w <= 0) continue;
      out += svg_rect(x, y, w, kBarHeight, kMemoryColour[t],
                      fmt::format("stage {}: {} {}", m.memory.stage, kTermName[t], human_bytes(terms[t])));
      x += w;
    }
    const double cap = kLabelWidth + m.capacity / scale * kBarWidth;
    out += svg_line(cap, y - 3, cap, y + kBarHeight + 3, "capacity");
    out += svg_text(kLabelWidth + kBarWidth + 8, y + 12,
                    fmt::format("{} of {}{}", human_bytes(m.memory.total()), human_bytes(m.capacity),
                                m.fits() ? "" : ", OUT OF MEMORY"),
                    "start", m.fits() ? "" : "bad");
    out += "</g>\n";
  }
  out += "</svg>\n<p class=\"legend\">";
  for (std::size_t t = 0; t < kTermName.size(); ++t) out += swatch(kMemoryColour[t], kTermName[t]);
  out += R"(<span class="key"><span class="sw cap"></span>capacity of one rank</span></p>)";
  out += "\n<table><tr><th>stage</th>";
  for (const auto name : kTermName) out += "<th>" + escape(name) + "</th>";
  out += "<th>total</th><th>capacity</th><th>units in flight</th></tr>\n";
  for (const auto& m : report.memory) {
    out += fmt::format("<tr{}><td>{}</td>", m.fits() ? "" : R"( class="bad")", m.memory.stage);
    for (const double b : terms_of(m.memory)) out += "<td>" + human_bytes(b) + "</td>";
    out += fmt::format("<td>{}</td><td>{}</td><td>{}</td></tr>\n", human_bytes(m.memory.total()),
                       human_bytes(m.capacity), m.memory.units_in_flight);
  }
  return out + "</table></section>\n";
}

}  // namespace trnsim::report::html
