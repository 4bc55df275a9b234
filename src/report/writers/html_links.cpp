// The link utilisation section of the HTML report, from StepRun::links (the links that carried
// traffic): per link kind the bytes and busy fraction, then the busiest links.
#include <algorithm>
#include <array>
#include <vector>

#include <fmt/core.h>

#include "html_sections.hpp"
#include "trnsim/net/topology.hpp"
#include "trnsim/report/writers/html_markup.hpp"

namespace trnsim::report::html {
namespace {

constexpr std::size_t kTopLinks = 10;

// A busy fraction as text and as a CSS bar (clamped to the cell; the text keeps the value).
std::string busy_cell(double fraction) {
  return fmt::format(R"(<td class="num">{}</td><td><span class="meter"><span style="width:{:.1f}%"></span></span></td>)",
                     percent(fraction), 100 * std::clamp(fraction, 0.0, 1.0));
}

}  // namespace

std::string links_section(const replay::StepRun& run, double step_s) {
  std::string out = "<section id=\"links\"><h2>Link utilisation</h2>\n";
  if (run.links.empty() || !(step_s > 0)) return out + "<p>No link carried traffic.</p></section>\n";
  if (!run.fabric) throw InternalError("links_section: a run's links without its fabric");
  const net::Topology& topology = run.fabric->topology;

  struct KindTotals {
    int links = 0;
    double bytes = 0, busy_s = 0, max_busy_s = 0;
  };
  std::array<KindTotals, net::kLinkKinds> kinds{};
  for (const auto& l : run.links) {
    auto& k = kinds[static_cast<std::size_t>(l.kind)];
    ++k.links;
    k.bytes += l.bytes;
    k.busy_s += l.busy_s;
    k.max_busy_s = std::max(k.max_busy_s, l.busy_s);
  }
  out += "<p class=\"note\">Busy fraction: seconds a link carried traffic over the step time (analytic network "
         "model: its bytes over its bandwidth; flow model: time with a flow on it). Links of the replicated "
         "ranks included.</p>\n";
  out += "<table><tr><th>link kind</th><th>links used</th><th>bytes</th><th>mean busy</th><th></th>"
         "<th>busiest</th><th></th></tr>\n";
  for (int i = 0; i < net::kLinkKinds; ++i) {
    const auto& k = kinds[static_cast<std::size_t>(i)];
    if (k.links == 0) continue;
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
                       escape(trnsim::to_string(static_cast<net::LinkKind>(i))), grouped(k.links), human_bytes(k.bytes));
    out += busy_cell(k.busy_s / k.links / step_s) + busy_cell(k.max_busy_s / step_s) + "</tr>\n";
  }
  out += "</table>\n";

  std::vector<const net::LinkUsage*> top;
  for (const auto& l : run.links) top.push_back(&l);
  const std::size_t n = std::min(kTopLinks, top.size());
  // Busiest first; ties by link id, so the order does not depend on the input order.
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(n), top.end(),
                    [](const auto* a, const auto* b) { return a->busy_s != b->busy_s ? a->busy_s > b->busy_s : a->id < b->id; });
  out += fmt::format("<h3>Busiest {} of {} links used</h3>\n", n, grouped(static_cast<double>(top.size())));
  out += "<table><tr><th>link</th><th>kind</th><th>bandwidth</th><th>bytes</th><th>busy</th><th></th></tr>\n";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& l = *top[i];
    out += fmt::format("<tr><td>{} &rarr; {}</td><td>{}</td><td class=\"num\">{:.1f} GB/s</td><td class=\"num\">{}</td>",
                       escape(net::source_name(topology, l.id)), escape(net::destination_name(topology, l.id)),
                       escape(trnsim::to_string(l.kind)), topology.link(l.id).bandwidth / 1e9,
                       human_bytes(l.bytes));
    out += busy_cell(l.busy_s / step_s) + "</tr>\n";
  }
  return out + "</table></section>\n";
}

}  // namespace trnsim::report::html
