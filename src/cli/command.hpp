#pragma once
// How a subcommand plugs into the trnsim executable. Each subcommand lives in its own file and
// exposes one add_*_command function; main.cpp calls them in the order they appear in --help.
// The action set on the subcommand runs after parsing and returns the process exit code
// (0 ok, 1 a finding the user asked to fail on, 2 bad input); it may throw trnsim::InputError,
// which main reports on stderr and maps to 2.
#include <charconv>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
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
void add_sweep_command(CLI::App& app, Action& action);
void add_merge_command(CLI::App& app, Action& action);
void add_sensitivity_command(CLI::App& app, Action& action);
void add_export_trace_command(CLI::App& app, Action& action);

// Registers the subcommand `name` with options of type Options: they live in one object shared
// with the action (which runs after add_*_command has returned), and choosing the subcommand sets
// `action` to run(options). Returns the subcommand and its options, for adding the flags.
template <class Options>
std::pair<CLI::App*, Options*> add_subcommand(CLI::App& app, Action& action, const std::string& name,
                                              const std::string& description, int (*run)(const Options&)) {
  auto options = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(name, description);
  sub->callback([&action, options, run] { action = [options, run] { return run(*options); }; });
  return {sub, options.get()};
}

// An integer option (or each item of a list option) in [low, high], checked on its text before
// CLI11 converts it (a huge value would be clamped): "expected integers in [1, 1048576], found
// 0". CLI11's own Range names no integer and, for a word, a range it does not hold.
inline CLI::Validator integers_in(std::int64_t low, std::int64_t high, bool list = true) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [at, ec] = std::from_chars(text.data(), end, v);
        if (ec != std::errc() || at != end || v < low || v > high)
          return "expected " + std::string(list ? "integers" : "an integer") + " in [" + std::to_string(low) + ", " +
                 std::to_string(high) + "], found " + text;
        return "";
      },
      "INT");
}

// --network: the help text ("Network model: analytic (closed form) or flow (...)") and the accepted
// names, from the registry of network models (network_option.cpp).
std::string network_model_help();
std::vector<std::string> network_model_choices();

// --instance and --nodes of `collective` and `topology`: a cluster of one instance preset
// (cluster_option.cpp).
struct ClusterOption {
  std::string instance;
  int nodes = 0;  // 0: one UltraServer's instances (1 for plain instances)

  void add_to(CLI::App& sub);
  // The instances the cluster has: --nodes, else one UltraServer's (1 for plain instances).
  // Throws InputError for an unknown preset.
  int instances() const;
};

// --max-memory and --force of the commands that simulate an experiment (memory_limit_option.cpp):
// a step whose simulation is estimated to need more memory than the limit stops with exit 2 and
// the estimate (replay/step_size.hpp) before anything is built.
struct MemoryLimitOption {
  std::string max_memory;  // "64GB", "16GiB", "500MB", "2e9" (bytes); empty: the memory available now
  bool force = false;

  // `estimate` says what is estimated (--help); empty: one step, as `run` and `validate` check it.
  void add_to(CLI::App& sub, const std::string& estimate = "");
  // The limit in bytes for replay::StepInput::max_memory_bytes: 0 (none) with --force or when
  // the available memory cannot be read (/proc/meminfo's MemAvailable). Throws InputError for a
  // --max-memory that is not a positive size.
  double bytes() const;
};

}  // namespace trnsim::cli
