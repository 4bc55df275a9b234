// trnsim sensitivity EXPERIMENT.json [--step 10%] [--json F] [--html F]: what each hardware figure buys the experiment's
// step time (explore/sensitivity.hpp).
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "output_file.hpp"
#include "trnsim/config/json_file.hpp"
#include "trnsim/explore/sensitivity.hpp"
#include "trnsim/explore/sensitivity_report.hpp"

namespace trnsim::cli {

namespace {

struct SensitivityOptions {
  std::string experiment;
  std::string step = "10%";
  std::vector<std::string> overrides;
  std::string network;
  int threads = 0;
  bool no_fast_forward = false;
  std::string json_path, html_path;
  MemoryLimitOption memory;
};

int run_sensitivity_command(const SensitivityOptions& o) {
  check_output_paths({o.json_path, o.html_path});
  explore::SensitivityOptions run;
  run.step = explore::parse_step(o.step);
  run.overrides = o.overrides;
  if (!o.network.empty()) run.overrides.push_back("network.model=" + o.network);
  run.max_memory_bytes = o.memory.bytes();
  run.fast_forward = !o.no_fast_forward;
  run.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const explore::SensitivityResult result =
      explore::run_sensitivity(config::read_json_file(o.experiment), o.experiment, run);
  // Files first: a run that cannot write what was asked for fails before printing results.
  if (!o.json_path.empty()) write_file(o.json_path, explore::to_json(result).dump(1) + "\n");
  if (!o.html_path.empty()) write_file(o.html_path, explore::sensitivity_html(result));
  fmt::print("{}", explore::format_sensitivity(result));
  return 0;
}

}  // namespace

void add_sensitivity_command(CLI::App& app, Action& action) {
  auto [cmd, o] = add_subcommand<SensitivityOptions>(
      app, action, "sensitivity",
      "Raise each hardware figure of the experiment's cluster in turn and rank the figures by the elasticity of "
      "the step time; for HBM capacity, the plans it admits",
      run_sensitivity_command);
  cmd->add_option("experiment", o->experiment, "Experiment file (JSON)")->required();
  cmd->add_option("--step", o->step,
                  "Change of each figure: a percentage such as 10%, 0.5% or 100% (negative: lowered; not 0, "
                  "above -100%); default 10%");
  cmd->add_option("--set", o->overrides, "Override a value before the figures are raised: PATH=VALUE, as `trnsim run --set`");
  cmd->add_option("--network", o->network, network_model_help())->check(CLI::IsMember(network_model_choices()));
  cmd->add_option("--threads", o->threads, "Simulations run at once (default: all cores); the output does not depend on it")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--no-fast-forward", o->no_fast_forward,
                "Replay every micro-batch of each simulation instead of fast-forwarding over the pipeline's steady "
                "state (the default where the repetition is checked exact: the same step time in picoseconds; for "
                "comparison)");
  cmd->add_option("--json", o->json_path, "Also write the result as JSON to this file");
  cmd->add_option("--html", o->html_path, "Also write a self-contained page (elasticities as bars, the table) to this file");
  o->memory.add_to(*cmd,
                   "Refuse a sensitivity run estimated to need more memory than this, checked before the experiment's "
                   "plan runs and again before the figures' and the capacity grid's simulations: the largest plan's "
                   "step (as `trnsim run` estimates it) times the simulations run at once (--threads)");
}

}  // namespace trnsim::cli
