#include "sweep_output.hpp"

#include <fmt/core.h>

#include "output_file.hpp"
#include "trnsim/explore/sweep_html.hpp"
#include "trnsim/explore/sweep_json.hpp"
#include "trnsim/explore/sweep_report.hpp"

namespace trnsim::cli {
namespace {

explore::SweepHtmlOptions html_options(const SweepOutputs& outputs, const std::vector<std::string>& vary_paths) {
  explore::SweepHtmlOptions o;
  if (!outputs.axes.empty()) o.axes = explore::parse_heat_axes(outputs.axes, vary_paths);
  o.metric = explore::parse_heat_metric(outputs.metric);
  return o;
}

}  // namespace

void check_sweep_outputs(const SweepOutputs& outputs, const std::vector<std::string>& vary_paths) {
  html_options(outputs, vary_paths);
  check_output_paths({outputs.json_path, outputs.csv_path, outputs.html_path});
}

int write_sweep_outputs(const explore::SweepResult& result, const SweepOutputs& outputs) {
  // Files first: a sweep that cannot write what was asked for fails before printing results.
  if (!outputs.json_path.empty()) write_file(outputs.json_path, explore::to_json(result).dump(1) + "\n");
  if (!outputs.csv_path.empty()) write_file(outputs.csv_path, explore::sweep_csv(result));
  if (!outputs.html_path.empty())
    write_file(outputs.html_path, explore::sweep_html(result, html_options(outputs, result.summary.vary_paths)));
  fmt::print("{}", explore::format_sweep(result, outputs.top));
  return 0;
}

}  // namespace trnsim::cli
