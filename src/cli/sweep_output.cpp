#include "sweep_output.hpp"

#include <fmt/core.h>

#include "output_file.hpp"
#include "trnsim/explore/sweep_json.hpp"
#include "trnsim/explore/sweep_report.hpp"

namespace trnsim::cli {

int write_sweep_outputs(const explore::SweepResult& result, const SweepOutputs& outputs) {
  // Files first: a sweep that cannot write what was asked for fails before printing results.
  if (!outputs.json_path.empty()) write_file(outputs.json_path, explore::to_json(result).dump(1) + "\n");
  if (!outputs.csv_path.empty()) write_file(outputs.csv_path, explore::sweep_csv(result));
  fmt::print("{}", explore::format_sweep(result, outputs.top));
  return 0;
}

}  // namespace trnsim::cli
