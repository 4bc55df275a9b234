#pragma once
// How a subcommand plugs into the trnsim executable. Each subcommand lives in its own file and
// exposes one add_*_command function; main.cpp calls them in the order they appear in --help.
// The action set on the subcommand runs after parsing and returns the process exit code
// (0 ok, 1 a finding the user asked to fail on, 2 bad input); it may throw trnsim::InputError,
// which main reports on stderr and maps to 2.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace trnsim::cli {

using Action = std::function<int()>;

// Each add_X_command(CLI::App& app, Action& action) registers one subcommand on `app` and stores
// in `action` what to run when it is chosen. Declared here, defined in src/cli/X_command.cpp.
void add_run_command(CLI::App& app, Action& action);
void add_validate_command(CLI::App& app, Action& action);
void add_compare_command(CLI::App& app, Action& action);
void add_presets_command(CLI::App& app, Action& action);
void add_collective_command(CLI::App& app, Action& action);
void add_topology_command(CLI::App& app, Action& action);

// --network: the help text ("Network model: analytic (closed form) or flow (...)") and the accepted
// names, from the registry of network models (network_option.cpp).
std::string network_model_help();
std::vector<std::string> network_model_choices();

}  // namespace trnsim::cli
