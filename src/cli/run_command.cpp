// trnsim run EXPERIMENT.json: for now only --dry-run, which prints the resolved experiment.
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/error.hpp"

namespace trnsim::cli {

namespace {
struct RunOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  bool dry_run = false;
};
}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one training step of an experiment");
  cmd->add_option("experiment", options->experiment, "Experiment file (JSON)")->required();
  cmd->add_option("--set", options->overrides,
                  "Override a value of the resolved experiment: PATH=VALUE, e.g. parallelism.tp=16 "
                  "(repeatable; VALUE is JSON when it parses, else a string)");
  cmd->add_flag("--dry-run", options->dry_run, "Print the resolved experiment as JSON and stop");
  cmd->callback([&action, options] {
    action = [options] {
      if (!options->dry_run)
        throw InputError(
            "run: the step simulation is not built yet; use --dry-run to check and print the resolved experiment");
      const config::Experiment ex = config::load_experiment(options->experiment, options->overrides);
      fmt::print("{}\n", ex.resolved.dump(2));
      return 0;
    };
  });
}

}  // namespace trnsim::cli
