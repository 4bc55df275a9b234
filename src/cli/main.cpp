// The trnsim executable: parses the command line, dispatches to one subcommand, maps errors to
// exit codes (0 ok, 1 a finding the user asked to fail on, 2 bad input). Logs go to stderr,
// results to stdout.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/auxv.h>
#include <unistd.h>
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

// Keeps freed memory mapped for the next allocation instead of handing it back to the kernel. A
// replay frees its graph, timeline and per-link arrays, and the next one (a fast-forward's
// reduced step, then the full step; a sweep's next plan) allocates about as much again: kept,
// those blocks come from the same pages; handed back, every page faults in again, which in the
// virtual machines of the README's figures was a fifth to a third of a plan's time. Left to
// glibc's own heuristics (its mmap threshold rises with the blocks freed, its trimming follows),
// that was decided per run: an unrelated change of allocations in the network layer doubled a
// sweep's page faults. So the three settings are fixed: blocks up to 256 MiB come from the heap
// (not a mapping of their own, unmapped when freed: at 65,536 chips a step's per-link lists are
// 6 to 19 MB each, allocated and freed once per replay), the heap keeps up to 512 MiB free at its
// top before trimming, and grows 64 MiB at a time. Measured on the 405B at 65,536 chips: page
// faults 3.7 k -> 1.0 k, system time 21 -> 12 ms, the same peak resident memory; the sweep
// benchmark 24.7 k -> 29.6 k plans a minute. A request to glibc's allocator; nothing elsewhere.
void keep_freed_memory_mapped() {
#if defined(__GLIBC__)
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

// Backs the whole heap with transparent huge pages through glibc's own switch, the tunable
// glibc.malloc.hugetlb=1 (glibc 2.35+: every heap and large block is advised MADV_HUGEPAGE), where
// Linux gives huge pages only on request (THP "madvise", Debian's default). A replay touches its
// memory once: in 4 KiB pages every first touch is a page fault, in a virtual machine about half
// of a 405B run at 1,024 chips (17.9 k faults; 2.7 k with the tunable, the run 0.36 -> 0.18 s).
// Tunables are read only when a process starts, so the executable starts itself again, once, with
// the tunable added to GLIBC_TUNABLES and kRestarted set (about 10 ms); outputs are the same
// bytes. It execs its own path (not /proc/self/exe, which would rename the process "exe" for ps,
// pgrep and perf). Left alone:
//  - when GLIBC_TUNABLES already names glibc.malloc.hugetlb: the user's choice stands, and
//    glibc.malloc.hugetlb=0 turns this off;
//  - when LD_PRELOAD is set: a tool (valgrind, heaptrack, rr) or another allocator is in the
//    process, and the restart would leave the tool behind;
//  - when kRestarted is set (this is the second start, whatever glibc kept of the tunables), and
//    in a setuid or setcap process (AT_SECURE), where glibc drops such tunables;
//  - when the restart fails: the run goes on as it is.
// Older glibc ignores the tunable (the restart then buys nothing); other C libraries skip all this.
constexpr const char* kRestarted = "TRNSIM_HUGE_PAGES_RESTARTED";

void use_transparent_huge_pages(char** argv) {
#if defined(__GLIBC__) && defined(__linux__)
  static constexpr const char* kSwitch = "glibc.malloc.hugetlb";
  const char* given = std::getenv("GLIBC_TUNABLES");
  if (given != nullptr && std::string_view(given).find(kSwitch) != std::string_view::npos) return;
  if (std::getenv("LD_PRELOAD") != nullptr || std::getenv(kRestarted) != nullptr) return;
  if (getauxval(AT_SECURE) != 0) return;
  std::array<char, 4096> self{};
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0 || static_cast<std::size_t>(n) >= self.size() - 1) return;
  const std::string before = given != nullptr ? given : "";
  const std::string tunables = before.empty() ? fmt::format("{}=1", kSwitch) : fmt::format("{}:{}=1", before, kSwitch);
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0 || setenv(kRestarted, "1", 1) != 0) return;
  execv(self.data(), argv);
  unsetenv(kRestarted);
  if (given != nullptr) {
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  } else {
    unsetenv("GLIBC_TUNABLES");
  }
#else
  static_cast<void>(argv);
#endif
}

// With -v, says whether this process is the restarted one and with which tunables (what the
// robustness test checks, and what someone timing trnsim may want to know).
void log_huge_pages() {
  if (std::getenv(kRestarted) == nullptr) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  spdlog::debug("restarted with GLIBC_TUNABLES={} (the heap on transparent huge pages)",
                tunables != nullptr ? tunables : "");
}

}  // namespace

int main(int argc, char** argv) {
  use_transparent_huge_pages(argv);
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
  log_huge_pages();

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
