// The Gantt section of the HTML report. Tasks are far more numerous than pixels (a 70B step has
// hundreds of thousands), so spans are accumulated into one bin per pixel and lane: a pixel takes
// the colour of the category that covered most of it and an opacity for the fraction of it that
// was busy (in quarters), and runs of equal pixels become one rectangle.
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "html_sections.hpp"
#include "trnsim/report/writers/html_markup.hpp"

namespace trnsim::report::html {
namespace {

using workload::Category;
using workload::Stream;

// Lanes of a row: the compute stream, then the TP, PP and DP communication streams.
constexpr int kLanes = 4;
// Kinds within a lane: the compute lane's categories (forward, backward, recompute, optimizer,
// as report::Part numbers them); a communication lane has kind 0 only.
constexpr int kKinds = 4;
constexpr std::array<double, kLanes> kLaneHeight{16, 5, 5, 5};  // px
constexpr double kLaneGap = 1, kRowGap = 9, kPlotLeft = 130, kTop = 8, kAxisHeight = 30;
// Bins covered less than this are left empty: nothing would be visible at that opacity.
constexpr double kMinCoverage = 0.01;

int lane_of(Stream s) {
  switch (s) {
    case Stream::Compute: return 0;
    case Stream::TpComm: return 1;
    case Stream::PpComm: return 2;
    case Stream::DpComm: return 3;
  }
  return 0;
}

int kind_of(const workload::Task& t) {
  if (t.stream != Stream::Compute) return 0;
  switch (t.category) {
    case Category::Backward: return 1;
    case Category::Recompute: return 2;
    case Category::Optimizer: return 3;
    default: return 0;
  }
}

std::string_view colour_of(int lane, int kind) {
  const int part = lane == 0 ? kind : static_cast<int>(Part::ExposedTp) + lane - 1;
  return kPartColour[part];
}

std::string name_of(int lane, int kind) {
  static constexpr std::array<std::string_view, kLanes> kComm{"", "TP collective", "pipeline send/recv",
                                                              "DP collective"};
  return lane == 0 ? std::string(part_name(static_cast<Part>(kind))) : std::string(kComm[static_cast<std::size_t>(lane)]);
}

double row_height() {
  double h = 0;
  for (const double l : kLaneHeight) h += l + kLaneGap;
  return h;
}

// The time axis: about eight ticks at 1, 2 or 5 x 10^k, labelled in one unit.
std::string time_axis(double step_s, double top, double bottom) {
  const double unit = step_s >= 1 ? 1 : step_s >= 1e-3 ? 1e-3 : 1e-6;
  const std::string_view unit_name = step_s >= 1 ? "s" : step_s >= 1e-3 ? "ms" : "us";
  const double raw = step_s / 8;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double tick = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
  std::string out;
  for (int i = 0; i * tick <= step_s * (1 + 1e-9); ++i) {
    const double x = kPlotLeft + i * tick / step_s * kGanttBins;
    out += svg_line(x, top, x, bottom + 4, "grid");
    out += svg_text(x, bottom + 16, fmt::format("{:g}", i * tick / unit), "middle", "tick");
  }
  out += svg_text(kPlotLeft + kGanttBins / 2.0, bottom + 29, fmt::format("time ({})", unit_name), "middle", "tick");
  return out;
}

struct Row {
  std::int64_t stage = 0;
  std::int32_t rank = 0;
};

// One row per stage: the lowest simulated rank of each stage, by stage. row_of_slot: per
// simulated rank (StepGraph::rank_slot), its row or -1.
std::vector<Row> rows_of(const workload::StepGraph& g, std::vector<int>& row_of_slot) {
  const auto& ranks = g.simulated_ranks;
  std::vector<std::int64_t> stage(ranks.size(), -1);
  for (const auto& t : g.tasks) {
    const std::size_t i = g.rank_slot(t.rank);
    if (stage[i] < 0) stage[i] = t.stage;
  }
  std::vector<std::pair<std::int64_t, std::size_t>> by_stage;  // (stage, rank index), ranks ascending
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (stage[i] >= 0) by_stage.emplace_back(stage[i], i);
  }
  std::stable_sort(by_stage.begin(), by_stage.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Row> rows;
  row_of_slot.assign(ranks.size(), -1);
  for (const auto& [s, i] : by_stage) {
    if (!rows.empty() && rows.back().stage == s) continue;
    row_of_slot[i] = static_cast<int>(rows.size());
    rows.push_back({s, ranks[i]});
  }
  return rows;
}

// Pixels of each bin covered by each kind: coverage[(row * kLanes + lane) * kGanttBins + bin][kind].
using Coverage = std::vector<std::array<double, kKinds>>;

Coverage coverage_of(const replay::StepRun& run, std::size_t rows, const std::vector<int>& row_of_slot) {
  const auto& g = run.graph;
  const double step_s = run.timeline.step_time.to_seconds();
  Coverage coverage(rows * kLanes * kGanttBins);
  for (std::size_t t = 0; t < g.tasks.size(); ++t) {
    const auto& task = g.tasks[t];
    const int row = row_of_slot[g.rank_slot(task.rank)];
    if (row < 0) continue;
    const auto& span = run.timeline.spans[t];
    const double x0 = span.start.to_seconds() / step_s * kGanttBins;
    const double x1 = std::min(span.end.to_seconds() / step_s * kGanttBins, double{kGanttBins});
    if (!(x1 > x0)) continue;
    const auto lane_base = (static_cast<std::size_t>(row) * kLanes + static_cast<std::size_t>(lane_of(task.stream))) *
                           kGanttBins;
    const auto kind = static_cast<std::size_t>(kind_of(task));
    for (auto b = static_cast<std::size_t>(x0); static_cast<double>(b) < x1 && b < kGanttBins; ++b) {
      const double lo = std::max(x0, static_cast<double>(b)), hi = std::min(x1, static_cast<double>(b + 1));
      coverage[lane_base + b][kind] += hi - lo;
    }
  }
  return coverage;
}

// One lane of one row: runs of bins with the same dominant kind and opacity level become one
// rectangle. `bins`: the lane's kGanttBins entries of the coverage.
std::string lane_svg(const Row& row, int lane, const std::array<double, kKinds>* bins, double y, double step_s) {
  std::string out;
  const double h = kLaneHeight[static_cast<std::size_t>(lane)];
  int run_kind = -1, run_level = 0;
  std::size_t run_begin = 0;
  double run_busy = 0;
  auto flush = [&](std::size_t end) {
    if (run_kind < 0) return;
    const double t0 = static_cast<double>(run_begin) / kGanttBins * step_s;
    const double t1 = static_cast<double>(end) / kGanttBins * step_s;
    const std::string title =
        fmt::format("stage {}: {} {} to {}, busy {}", row.stage, name_of(lane, run_kind), human_seconds(t0),
                    human_seconds(t1), percent(run_busy / static_cast<double>(end - run_begin)));
    const std::string opacity = run_level == 4 ? std::string() : fmt::format(R"( fill-opacity="{}")", run_level * 0.25);
    out += fmt::format(R"(<rect x="{:.0f}" y="{:.0f}" width="{}" height="{:.0f}" fill="{}"{}><title>{}</title></rect>)",
                       kPlotLeft + static_cast<double>(run_begin), y, end - run_begin, h, colour_of(lane, run_kind),
                       opacity, escape(title));
  };
  for (std::size_t b = 0; b < kGanttBins; ++b) {
    const auto& c = bins[b];
    double total = 0;
    int dominant = 0;
    for (int k = 0; k < kKinds; ++k) {
      total += c[static_cast<std::size_t>(k)];
      if (c[static_cast<std::size_t>(k)] > c[static_cast<std::size_t>(dominant)]) dominant = k;
    }
    total = std::min(total, 1.0);
    const int kind = total < kMinCoverage ? -1 : dominant;
    const int level = kind < 0 ? 0 : std::clamp(static_cast<int>(std::ceil(total * 4 - 1e-9)), 1, 4);
    if (kind != run_kind || level != run_level) {
      flush(b);
      run_kind = kind;
      run_level = level;
      run_begin = b;
      run_busy = 0;
    }
    run_busy += total;
  }
  flush(kGanttBins);
  return out;
}

// Row r: its label, then its lanes top to bottom.
std::string row_svg(const Row& row, std::size_t r, const Coverage& coverage, double step_s) {
  double y = kTop + static_cast<double>(r) * (row_height() + kRowGap);
  std::string out = fmt::format(R"(<g class="gantt-row" data-stage="{}" data-rank="{}">)", row.stage, row.rank);
  out += svg_text(kPlotLeft - 8, y + 12, fmt::format("stage {} (rank {})", row.stage, row.rank), "end");
  for (int lane = 0; lane < kLanes; ++lane) {
    out += lane_svg(row, lane, &coverage[(r * kLanes + static_cast<std::size_t>(lane)) * kGanttBins], y, step_s);
    y += kLaneHeight[static_cast<std::size_t>(lane)] + kLaneGap;
  }
  return out + "</g>\n";
}

std::string legend_and_note(double step_s) {
  std::string out = "<p class=\"legend\">";
  for (int k = 0; k < kKinds; ++k) out += swatch(colour_of(0, k), name_of(0, k));
  for (int lane = 1; lane < kLanes; ++lane) out += swatch(colour_of(lane, 0), name_of(lane, 0));
  return out + "</p>\n<p class=\"note\">Each row is the simulated rank of one pipeline stage: the tall lane is its "
               "compute stream, the thin lanes below are its TP, PP and DP communication streams (from the moment "
               "the rank reaches a call until it completes). One pixel is " +
         escape(human_seconds(step_s / kGanttBins)) +
         "; it shows the category that covered most of it, paler where the stream was busy for only part of "
         "it.</p></section>\n";
}

}  // namespace

std::string gantt_section(const replay::StepRun& run) {
  const double step_s = run.timeline.step_time.to_seconds();
  std::vector<int> row_of_slot;
  const std::vector<Row> rows = rows_of(run.graph, row_of_slot);
  std::string out = "<section id=\"gantt\"><h2>Pipeline timeline</h2>\n";
  if (rows.empty() || !(step_s > 0)) return out + "<p>No tasks ran.</p></section>\n";
  const Coverage coverage = coverage_of(run, rows.size(), row_of_slot);
  const double plot_bottom = kTop + static_cast<double>(rows.size()) * (row_height() + kRowGap) - kRowGap;
  const double width = kPlotLeft + kGanttBins + 20;
  out += fmt::format(R"(<svg class="chart" viewBox="0 0 {:.0f} {:.0f}" role="img" aria-label="pipeline timeline">)",
                     width, plot_bottom + kAxisHeight + 6);
  out += time_axis(step_s, kTop - 4, plot_bottom);
  for (std::size_t r = 0; r < rows.size(); ++r) out += row_svg(rows[r], r, coverage, step_s);
  return out + "</svg>\n" + legend_and_note(step_s);
}

}  // namespace trnsim::report::html
