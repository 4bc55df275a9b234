#include "trnsim/config/json_file.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/json_nesting.hpp"

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
  // An ifstream opens a directory on Linux and fails only on the first read, and reads a device
  // (/dev/zero) without end: say what it is. A pipe (a shell's <(...)) is read like a file.
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::directory)
    throw InputError(fmt::format("{}: expected a JSON file, found a directory", path));
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block)
    throw InputError(fmt::format("{}: expected a JSON file, found a device", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file ({})", path, std::strerror(errno)));
  // Read a chunk at a time up to a bound that no experiment, report or sweep file comes near, so
  // that an endless pipe is an error, not an exhausted memory.
  std::string text;
  std::array<char, 1 << 16> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxJsonFileBytes)
      throw InputError(fmt::format("{}: expected a JSON file of at most {} GiB, found a larger one", path,
                                   kMaxJsonFileBytes >> 30));
  }
  if (in.bad()) throw InputError(fmt::format("{}: cannot read file", path));
  return parse_json_text(text, path);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  check_json_nesting(text, file);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    invalid_json(file, e);
  }
}

}  // namespace trnsim::config
