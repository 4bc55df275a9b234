#include "output_file.hpp"

#include <fstream>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::cli {

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(fmt::format("{}: cannot open for writing", path));
  write(out);
  if (!out.flush()) throw InputError(fmt::format("{}: write failed", path));
}

void write_file(const std::string& path, const std::string& text) {
  write_file(path, [&text](std::ostream& out) { out << text; });
}

}  // namespace trnsim::cli
