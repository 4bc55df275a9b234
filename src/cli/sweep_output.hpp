#pragma once
// What `trnsim sweep` and `trnsim merge` write, from the same SweepResult: so merged shards write
// byte for byte what the unsharded sweep writes.
#include <cstddef>
#include <string>
#include <vector>

#include "trnsim/explore/sweep.hpp"

namespace trnsim::cli {

struct SweepOutputs {
  std::size_t top = 10;
  std::string csv_path, json_path, html_path;
  std::string axes;                  // --axes X,Y; empty: the default (explore::default_heat_axes)
  std::string metric = "step_time";  // --metric
};

// Throws InputError for --axes or --metric values the page cannot take, given the sweep's --vary
// paths: so that a sweep fails on them before it runs, not after.
void check_sweep_outputs(const SweepOutputs& outputs, const std::vector<std::string>& vary_paths);

// Writes the files asked for, then prints the table on stdout. Returns the exit code (0).
int write_sweep_outputs(const explore::SweepResult& result, const SweepOutputs& outputs);

}  // namespace trnsim::cli
