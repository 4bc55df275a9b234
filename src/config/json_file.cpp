#include "trnsim/config/json_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::config {
namespace {

[[noreturn]] void invalid_json(const std::string& file, const nlohmann::json::exception& e) {
  // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ..."
  std::string what = e.what();
  if (const auto close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
  throw InputError(fmt::format("{}: invalid JSON: {}", file, what));
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  std::error_code ec;
  // An ifstream opens a directory on Linux and fails only on the first read: say what it is.
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: expected a JSON file, found a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file ({})", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: cannot read file", path));
  return parse_json_text(std::move(text).str(), path);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    invalid_json(file, e);
  }
}

}  // namespace trnsim::config
