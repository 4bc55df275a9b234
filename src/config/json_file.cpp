#include "trnsim/config/json_file.hpp"

#include <fstream>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::config {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ..."
    std::string what = e.what();
    if (const auto close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
    throw InputError(fmt::format("{}: invalid JSON: {}", path, what));
  }
}

}  // namespace trnsim::config
