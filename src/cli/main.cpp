// The trnsim executable: parses the command line, dispatches to one subcommand, maps errors to
// exit codes (0 ok, 1 a finding the user asked to fail on, 2 bad input). Logs go to stderr,
// results to stdout.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "command.hpp"
#include "trnsim/error.hpp"
#include "trnsim/report/writers/output_file.hpp"

#ifndef TRNSIM_VERSION
#define TRNSIM_VERSION "0.1.0"
#endif

namespace {

// Keeps up to 64 MiB of freed memory at the top of each malloc heap instead of handing it back to
// the kernel. A replay frees its graph and timeline, and the next one (a fast-forward's reduced
// step, then the full step it falls back to; a sweep's next plan) allocates about as much again:
// kept, those blocks come from the same pages; handed back, every page faults in again, which in
// the virtual machines of the README's figures was a fifth to a third of a plan's time. Left to
// glibc's own heuristics (its mmap threshold rises with the blocks freed, its trimming follows),
// that was decided per run: an unrelated change of allocations in the network layer doubled a
// sweep's page faults. Setting M_TOP_PAD also fixes the mmap threshold at glibc's 128 KiB default
// (the heuristic is then off): a large block that the kept memory cannot serve is mapped on its
// own, as glibc did before its threshold first rose. The pages kept were resident at the last
// replay's peak, so the peak resident memory does not grow (measured: within 2 %). A request to
// glibc's allocator; nothing elsewhere.
void keep_freed_memory_mapped() {
#if defined(__GLIBC__)
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_mapped();
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

  // A first word that is no option and no subcommand: CLI11 would only say that a subcommand is
  // required; name the word and the subcommands.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      fmt::print(stderr, "error: unknown subcommand \"{}\" (expected one of {})\n", argv[1], fmt::join(names, ", "));
      return 2;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version: CLI11 prints them and returns 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    // A usage error is bad input (2), reported in one line like every other input error.
    fmt::print(stderr, "error: {} (--help lists the options)\n", e.what());
    return 2;
  }

  // An interrupted run leaves no half-written output file behind (report/writers/output_file.hpp).
  trnsim::report::remove_partial_outputs_on_signal();

  auto logger = spdlog::stderr_color_mt("trnsim");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
  spdlog::set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::info);

  try {
    return action ? action() : 2;
  } catch (const trnsim::InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    // The resource guard (replay/step_size.hpp) estimates before simulating; an allocation that
    // fails all the same is the machine's limit, not a defect of trnsim.
    fmt::print(stderr, "error: out of memory (the inputs need more memory than this machine has; --max-memory "
                       "sets the limit the estimate is checked against)\n");
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return 3;
  }
}
