// trnsim run EXPERIMENT.json: simulate one optimizer step and report it.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "step_input.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/step_report.hpp"

namespace trnsim::cli {

namespace {

struct RunOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  std::string network;
  std::string json_path;
  bool dry_run = false;
  bool strict = false;
};

int run(const RunOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.network.empty()) overrides.push_back("network.model=" + o.network);
  const config::Experiment ex = config::load_experiment(o.experiment, overrides);
  if (o.dry_run) {
    fmt::print("{}\n", ex.resolved.dump(2));
    return 0;
  }
  const replay::StepInput input = step_input(ex);
  const replay::StepRun step = replay::simulate_step(input);
  const report::StepReport rep = report::analyze(input, step);
  // Files first: a run that cannot write what was asked for fails before printing results.
  if (!o.json_path.empty()) write_file(o.json_path, report::to_json(rep, ex.resolved).dump(2) + "\n");
  fmt::print("{}", report::format_text(rep));
  const bool oom = std::any_of(rep.memory.begin(), rep.memory.end(), [](const auto& m) { return !m.fits(); });
  return o.strict && oom ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one training step of an experiment");
  cmd->add_option("experiment", options->experiment, "Experiment file (JSON)")->required();
  cmd->add_option("--set", options->overrides,
                  "Override a value of the resolved experiment: PATH=VALUE, e.g. parallelism.tp=16 "
                  "(repeatable; VALUE is JSON when it parses, else a string)");
  cmd->add_option("--network", options->network, "Network model: analytic (closed form) or flow (max-min flows)")
      ->check(CLI::IsMember({"analytic", "flow"}));
  cmd->add_option("--json", options->json_path, "Also write the report as JSON to this file");
  cmd->add_flag("--strict", options->strict, "Exit 1 when a rank runs out of memory");
  cmd->add_flag("--dry-run", options->dry_run, "Print the resolved experiment as JSON and stop");
  cmd->callback([&action, options] { action = [options] { return run(*options); }; });
}

}  // namespace trnsim::cli
