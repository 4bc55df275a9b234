#pragma once
// Reading JSON objects into structs with the location of every value kept, so that each error
// names the file, the JSON path (RFC 6901 pointer), what was expected and what was found.
// Contract: every accessor marks its key as known; finish() then rejects any other key.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/enum_names.hpp"

namespace trnsim::config::detail {

using nlohmann::json;

// Throws InputError "FILE: PATH: WHAT" (PATH "/" for the document root).
[[noreturn]] void fail(const std::string& file, const std::string& path, const std::string& what);

// Runs `check`, a validator of a lower layer whose InputError names the JSON path, and rethrows
// its error with the file name in front: "FILE: PATH: WHAT".
void in_file(const std::string& file, const std::function<void()>& check);

// A short rendering of a found value for messages: 12, "eight", null, an object, an array.
std::string describe(const json& value);

// A text for a one-line message: as it is up to 60 characters, else its first 40 and its length
// ("abc... (1000000 characters)"): a key of a megabyte or a number of 5,000 digits.
std::string shortened(std::string_view text);

// Appends one key (shortened) to a JSON pointer, escaping '~' and '/'.
std::string child_path(const std::string& path, std::string_view key);

// The physical range of a numeric field, in its key's unit.
struct Range {
  double min = 0, max = 0;
  std::string_view zero_means = {};  // not empty: 0 is accepted too and means this ("not published")
};

// Parallel degrees and counts of sequences, up to 2^20 each, so that their products stay far
// inside int64 (the experiment's plan and the software's defaults share it).
inline constexpr Range kDegree{1, 1 << 20};

class ObjectReader {
 public:
  // Throws unless `value` is an object.
  ObjectReader(const json& value, std::string file, std::string path);

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string path_of(std::string_view key) const { return child_path(path_, key); }
  bool has(std::string_view key) const;                 // present and not null
  bool present(std::string_view key) const;             // present, possibly null
  [[noreturn]] void fail_at(std::string_view key, const std::string& what) const;

  // Integers: whole JSON numbers in [min, max]; absent or null is an error. The default max keeps
  // every count within int (spec fields are int) and products of a few counts within int64.
  static constexpr std::int64_t kMaxCount = 2147483647;
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max = kMaxCount);

  // A number in `range` (or 0 when the range gives 0 a meaning); the message names the range.
  double number(std::string_view key, const Range& range);

  std::string string(std::string_view key);
  std::string string_or(std::string_view key, std::string fallback);
  bool boolean(std::string_view key);

  // One of the `names`; returns its index.
  std::size_t choice(std::string_view key, const std::vector<std::string_view>& names);
  std::optional<std::size_t> optional_choice(std::string_view key,
                                             const std::vector<std::string_view>& names);
  // One of an enum's spellings (trnsim/enum_names.hpp).
  template <NamedEnum E>
  E choice(std::string_view key) {
    return enum_table(E{})[choice(key, enum_names<E>())].value;
  }

  ObjectReader object(std::string_view key);
  std::optional<ObjectReader> optional_object(std::string_view key);

  // The raw value (marked known), or nullptr when absent.
  const json* raw(std::string_view key);

  // Documentation keys allowed on every object: "source" (string), "sources" (object of strings,
  // per-field provenance), "notes" (string or array of strings), "description" (string).
  void documentation();
  std::string source() const;  // "source", or the "sources" entries joined, or ""

  // Rejects every key no accessor asked for.
  void finish() const;

 private:
  const json* find(std::string_view key) const;
  const json& require(std::string_view key, std::string_view expected);
  void mark(std::string_view key);

  const json* value_;
  std::string file_, path_;
  std::vector<std::string> known_;
};

}  // namespace trnsim::config::detail
