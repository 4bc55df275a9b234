// --max-memory SIZE and --force: the resource guard's limit (command.hpp, MemoryLimitOption).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/core.h>

#include "command.hpp"
#include "trnsim/error.hpp"

namespace trnsim::cli {
namespace {

// MemAvailable of /proc/meminfo in bytes (the kernel's estimate of what can be allocated without
// swapping), or 0 when it cannot be read (not Linux, no /proc).
double available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    double kib = 0;
    std::string unit;
    if (!(in >> kib >> unit)) break;
    if (key == "MemAvailable:") return kib * 1024;  // the file's "kB" are KiB
  }
  return 0;
}

double parse_size(const std::string& text) {
  // Units with their factors; GB means 10^9, GiB 2^30 (DESIGN.md, "Units").
  static const std::pair<const char*, double> kUnits[] = {
      {"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0},
      {"TB", 1e12},             {"GB", 1e9},           {"MB", 1e6},        {"kB", 1e3}, {"KB", 1e3}, {"B", 1}};
  std::string number = text;
  double factor = 1;
  for (const auto& [suffix, f] : kUnits) {
    const std::string s(suffix);
    if (number.size() > s.size() && number.compare(number.size() - s.size(), s.size(), s) == 0) {
      number.resize(number.size() - s.size());
      factor = f;
      break;
    }
  }
  char* end = nullptr;
  const double v = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) || v <= 0 ||
      !std::isfinite(v * factor))
    throw InputError(fmt::format("--max-memory {}: expected a positive size in bytes, with or without a unit (kB or KB, "
                                 "MB, GB, TB; KiB, MiB, GiB, TiB), e.g. 64GB, 16GiB or 2e9",
                                 text));
  return v * factor;
}

}  // namespace

void MemoryLimitOption::add_to(CLI::App& sub, const std::string& estimate) {
  sub.add_option("--max-memory", max_memory,
                 (estimate.empty() ? std::string("Refuse a step whose simulation is estimated to need more memory than this")
                                   : estimate) +
                     " (exit 2 with the estimate): e.g. 64GB, 16GiB, 2e9 (bytes); default: the memory available now "
                     "(MemAvailable)");
  sub.add_flag("--force", force, "Simulate even when the memory estimate exceeds --max-memory");
}

double MemoryLimitOption::bytes() const {
  const double limit = max_memory.empty() ? available_memory_bytes() : parse_size(max_memory);
  return force ? 0 : limit;
}

}  // namespace trnsim::cli
