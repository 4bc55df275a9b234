#include "trnsim/config/json_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "json_reader.hpp"
#include "trnsim/error.hpp"
#include "trnsim/json_nesting.hpp"

namespace trnsim::config {
namespace {

// The parser quotes the token it stopped at, whole: a number of 5,000 digits, or a megabyte-long
// string, would fill the terminal. Each quoted run is shortened.
std::string shorten_quotes(const std::string& what) {
  std::string out;
  std::size_t at = 0;
  while (at < what.size()) {
    const std::size_t open = what.find('\'', at);
    const std::size_t close = open == std::string::npos ? open : what.find('\'', open + 1);
    if (close == std::string::npos) break;
    out.append(what, at, open + 1 - at);
    out += detail::shortened(std::string_view(what).substr(open + 1, close - open - 1));
    out += '\'';
    at = close + 1;
  }
  out.append(what, std::min(at, what.size()), std::string::npos);
  return out;
}

[[noreturn]] void invalid_json(const std::string& file, const nlohmann::json::exception& e) {
  // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ..."
  std::string what = e.what();
  if (const auto close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
  throw InputError(fmt::format("{}: invalid JSON: {}", file, shorten_quotes(what)));
}

// A key given twice in one object: nlohmann keeps the last, silently (a second "model" would
// replace the first). The path of each object is followed, key by key and index by index, so the
// error names where the key repeats.
class KeyPaths {
 public:
  explicit KeyPaths(const std::string& file) : file_(&file) {}
  bool operator()(int, nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start: frames_.push_back({true, {}, 0, {}}); break;
      case E::array_start: frames_.push_back({false, {}, 0, {}}); break;
      case E::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (std::find(f.keys.begin(), f.keys.end(), f.key) != f.keys.end()) {
          const std::string key = detail::shortened(f.key);
          frames_.pop_back();  // the path of the object that holds it
          throw InputError(
              fmt::format("{}: {}: key \"{}\" given twice (expected each key once in an object)", *file_, path(), key));
        }
        f.keys.push_back(f.key);
        break;
      }
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        next_element();
        break;
      case E::value: next_element(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::string key;          // an object's key being read
    std::size_t index;        // an array's element being read
    std::vector<std::string> keys;
  };
  void next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  // As every other message of a configuration file writes it (child_path: escaped, shortened).
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) p = detail::child_path(p, f.object ? f.key : std::to_string(f.index));
    return p.empty() ? "/" : p;
  }

  const std::string* file_;
  std::vector<Frame> frames_;
};

}  // namespace

nlohmann::json read_json_file(const std::string& path, DuplicateKeys keys) {
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
  // A file is refused by its size before it is read; a pipe, a chunk at a time, at the same bound
  // (an endless one is an error, not an exhausted memory).
  std::string text;
  if (type == std::filesystem::file_type::regular) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxJsonFileBytes)
      throw InputError(fmt::format("{}: expected a JSON file of at most {} GiB, found {:.1f} GiB", path,
                                   kMaxJsonFileBytes >> 30, static_cast<double>(size) / (1 << 30)));
    if (!ec) text.reserve(size);
  }
  std::array<char, 1 << 16> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxJsonFileBytes)
      throw InputError(fmt::format("{}: expected a JSON file of at most {} GiB, found a larger one", path,
                                   kMaxJsonFileBytes >> 30));
  }
  if (in.bad()) throw InputError(fmt::format("{}: cannot read file", path));
  return parse_json_text(text, path, keys);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file, DuplicateKeys keys) {
  check_json_nesting(text, file);
  try {
    if (keys == DuplicateKeys::Refused) return nlohmann::json::parse(text, KeyPaths(file));
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    invalid_json(file, e);
  }
}

}  // namespace trnsim::config
