#pragma once
// What `trnsim sweep` and `trnsim merge` write, from the same SweepResult: so merged shards write
// byte for byte what the unsharded sweep writes.
#include <cstddef>
#include <string>

#include "trnsim/explore/sweep.hpp"

namespace trnsim::cli {

struct SweepOutputs {
  std::size_t top = 10;
  std::string csv_path, json_path;
};

// Writes the files asked for, then prints the table on stdout. Returns the exit code (0).
int write_sweep_outputs(const explore::SweepResult& result, const SweepOutputs& outputs);

}  // namespace trnsim::cli
