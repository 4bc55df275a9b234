// The trnsim executable: parses the command line, dispatches to one subcommand, maps errors to
// exit codes (0 ok, 1 a finding the user asked to fail on, 2 bad input). Logs go to stderr,
// results to stdout.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "command.hpp"
#include "trnsim/error.hpp"

#ifndef TRNSIM_VERSION
#define TRNSIM_VERSION "0.1.0"
#endif

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a discrete-event simulator of AWS Trainium training clusters"};
  app.set_version_flag("--version", TRNSIM_VERSION);
  app.require_subcommand(1);
  bool verbose = false;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug detail to stderr");
  app.add_flag("-q,--quiet", quiet, "Log only errors to stderr");

  trnsim::cli::Action action;
  // Subcommands register here, in --help order, once they work.
  trnsim::cli::add_run_command(app, action);
  trnsim::cli::add_validate_command(app, action);
  trnsim::cli::add_sweep_command(app, action);
  trnsim::cli::add_merge_command(app, action);
  trnsim::cli::add_sensitivity_command(app, action);
  trnsim::cli::add_export_trace_command(app, action);
  trnsim::cli::add_compare_command(app, action);
  trnsim::cli::add_presets_command(app, action);
  trnsim::cli::add_collective_command(app, action);
  trnsim::cli::add_topology_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 returns 0 for --help/--version; usage errors are bad input (2).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  auto logger = spdlog::stderr_color_mt("trnsim");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
  spdlog::set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::info);

  try {
    return action ? action() : 2;
  } catch (const trnsim::InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return 3;
  }
}
