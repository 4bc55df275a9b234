#pragma once
// An experiment as the replay layer's input: what every command (and test) that simulates one
// experiment hands to replay::simulate_step.
#include "trnsim/config/experiment.hpp"
#include "trnsim/replay/step_simulation.hpp"

namespace trnsim::config {

// The experiment's cluster, model, training, parallelism and network choice. `symmetric` keeps
// its default (one simulated rank per pipeline stage).
replay::StepInput step_input(const Experiment& experiment);

}  // namespace trnsim::config
