// read_trace: which reader a trace path needs (contract in trnsim/trace/trace.hpp).
#include <filesystem>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/trace/chakra.hpp"
#include "trnsim/trace/trace.hpp"

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes

Trace read_trace(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::is_regular_file(path) || fs::is_fifo(path)) return read_trace_json(path);  // a pipe too, as every input
  if (fs::exists(path + ".0.et")) return build_trace(read_chakra(path, ChakraEncoding::Binary));
  if (fs::exists(path + ".0.json")) return build_trace(read_chakra(path, ChakraEncoding::Json));
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError(fmt::format("{}: expected a trnsim JSON trace at this path, or Chakra files {}.0.et or {}.0.json; "
                                 "found a directory (a Chakra trace is named by its files' prefix, not their folder)",
                                 path, path, path));
  if (fs::exists(path, ec))
    throw InputError(fmt::format("{}: expected a trnsim JSON trace at this path, found a device", path));
  throw InputError(fmt::format("{}: no such trace (expected a trnsim JSON trace at this path, or Chakra files {}.0.et or {}.0.json)",
                               path, path, path));
}

}  // namespace trnsim::trace
