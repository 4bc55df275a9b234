#include "json_reader.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "trnsim/error.hpp"

namespace trnsim::config::detail {

void fail(const std::string& file, const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}: {}", file.empty() ? "<memory>" : file,
                               path.empty() ? "/" : path, what));
}

void in_file(const std::string& file, const std::function<void()>& check) {
  try {
    check();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", file.empty() ? "<memory>" : file, e.what()), e.reason());
  }
}

std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::null: return "null";
    default: {
      // Replace, not throw, on ill-formed UTF-8: a message must not fail on the value it quotes.
      std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
      if (text.size() > 60) text = text.substr(0, 57) + "...";
      return text;
    }
  }
}

std::string shortened(std::string_view text) {
  if (text.size() <= 60) return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, 40), text.size());
}

std::string child_path(const std::string& path, std::string_view key) {
  std::string escaped;
  for (const char c : shortened(key)) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return path + "/" + escaped;
}

ObjectReader::ObjectReader(const json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {
  if (!value.is_object()) fail(file_, path_, "expected an object, found " + describe(value));
}

const json* ObjectReader::find(std::string_view key) const {
  const auto it = value_->find(key);
  return it == value_->end() ? nullptr : &*it;
}

void ObjectReader::mark(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

bool ObjectReader::has(std::string_view key) const {
  const json* v = find(key);
  return v != nullptr && !v->is_null();
}

bool ObjectReader::present(std::string_view key) const { return find(key) != nullptr; }

void ObjectReader::fail_at(std::string_view key, const std::string& what) const {
  fail(file_, path_of(key), what);
}

const json& ObjectReader::require(std::string_view key, std::string_view expected) {
  mark(key);
  const json* v = find(key);
  if (v == nullptr) fail_at(key, fmt::format("missing required field (expected {})", expected));
  return *v;
}

const json* ObjectReader::raw(std::string_view key) {
  mark(key);
  return find(key);
}

std::int64_t ObjectReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const std::string expected =
      max == kMaxCount ? fmt::format("an integer >= {}", min) : fmt::format("an integer in [{}, {}]", min, max);
  const json& v = require(key, expected);
  if (!v.is_number_integer()) fail_at(key, fmt::format("expected {}, found {}", expected, describe(v)));
  // Large unsigned values would wrap; nothing trnsim reads needs more than int64.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{INT64_MAX})
    fail_at(key, fmt::format("expected {}, found {}", expected, describe(v)));
  const auto n = v.get<std::int64_t>();
  if (n < min || n > max) fail_at(key, fmt::format("expected {}, found {}", expected, n));
  return n;
}

double ObjectReader::number(std::string_view key, const Range& range) {
  const std::string interval = fmt::format("a number in [{:g}, {:g}]", range.min, range.max);
  const std::string expected =
      range.zero_means.empty() ? interval : fmt::format("0 ({}) or {}", range.zero_means, interval);
  const json& v = require(key, expected);
  if (!v.is_number()) fail_at(key, fmt::format("expected {}, found {}", expected, describe(v)));
  const auto x = v.get<double>();
  const bool zero_ok = !range.zero_means.empty() && x == 0;
  if (!std::isfinite(x) || (!zero_ok && (x < range.min || x > range.max)))
    fail_at(key, fmt::format("expected {}, found {}", expected, describe(v)));
  return x;
}

std::string ObjectReader::string(std::string_view key) {
  const json& v = require(key, "a string");
  if (!v.is_string()) fail_at(key, "expected a string, found " + describe(v));
  return v.get<std::string>();
}

std::string ObjectReader::string_or(std::string_view key, std::string fallback) {
  mark(key);
  return present(key) ? string(key) : fallback;
}

bool ObjectReader::boolean(std::string_view key) {
  const json& v = require(key, "true or false");
  if (!v.is_boolean()) fail_at(key, "expected true or false, found " + describe(v));
  return v.get<bool>();
}

std::size_t ObjectReader::choice(std::string_view key, const std::vector<std::string_view>& names) {
  const std::string expected = fmt::format("one of {}", fmt::join(names, ", "));
  const json& v = require(key, expected);
  if (v.is_string()) {
    const auto text = v.get<std::string>();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == text) return i;
  }
  fail_at(key, fmt::format("expected {}, found {}", expected, describe(v)));
}

std::optional<std::size_t> ObjectReader::optional_choice(std::string_view key,
                                                         const std::vector<std::string_view>& names) {
  mark(key);
  if (!has(key)) return std::nullopt;
  return choice(key, names);
}

ObjectReader ObjectReader::object(std::string_view key) {
  const json& v = require(key, "an object");
  return ObjectReader(v, file_, path_of(key));
}

std::optional<ObjectReader> ObjectReader::optional_object(std::string_view key) {
  mark(key);
  if (!present(key)) return std::nullopt;
  return object(key);
}

void ObjectReader::documentation() {
  string_or("source", "");
  string_or("description", "");
  if (const json* notes = raw("notes")) {
    const bool ok = notes->is_string() ||
                    (notes->is_array() && std::all_of(notes->begin(), notes->end(),
                                                      [](const json& n) { return n.is_string(); }));
    if (!ok) fail_at("notes", "expected a string or an array of strings, found " + describe(*notes));
  }
  if (const json* sources = raw("sources")) {
    if (!sources->is_object()) fail_at("sources", "expected an object of strings, found " + describe(*sources));
    for (const auto& [k, v] : sources->items())
      if (!v.is_string()) fail(file_, child_path(path_of("sources"), k), "expected a string, found " + describe(v));
  }
}

std::string ObjectReader::source() const {
  if (const json* s = find("source"); s != nullptr && s->is_string()) return s->get<std::string>();
  std::vector<std::string> entries;
  if (const json* sources = find("sources"); sources != nullptr && sources->is_object()) {
    for (const auto& [k, v] : sources->items())
      if (v.is_string()) entries.push_back(k + ": " + v.get<std::string>());
  }
  return fmt::format("{}", fmt::join(entries, "; "));
}

void ObjectReader::finish() const {
  for (const auto& [key, v] : value_->items()) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::vector<std::string_view> names(known_.begin(), known_.end());
    std::sort(names.begin(), names.end());
    fail(file_, path_of(key), fmt::format("unknown key (expected one of: {})", fmt::join(names, ", ")));
  }
}

}  // namespace trnsim::config::detail
