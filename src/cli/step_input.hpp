#pragma once
// What the subcommands that simulate share: an experiment as the replay layer's input, and
// writing an output file the user asked for.
#include <string>

#include "trnsim/config/experiment.hpp"
#include "trnsim/replay/step_simulation.hpp"

namespace trnsim::cli {

// The experiment's cluster, model, training, parallelism and network choice, as simulate_step takes them.
replay::StepInput step_input(const config::Experiment& experiment);

// Writes `text` to `path`; throws InputError naming the path when it cannot.
void write_file(const std::string& path, const std::string& text);

}  // namespace trnsim::cli
