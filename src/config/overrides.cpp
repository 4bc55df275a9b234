// --set PATH=VALUE: a dotted path into the resolved experiment and a JSON (or string) value.
#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "json_reader.hpp"
#include "parse.hpp"
#include "resolve.hpp"
#include "trnsim/error.hpp"
#include "trnsim/json_nesting.hpp"

namespace trnsim::config::detail {

bool Override::selects_preset() const {
  if (keys == std::vector<std::string>{"cluster", "instance"}) return true;
  if (keys == std::vector<std::string>{"software", "preset"}) return true;
  if (keys == std::vector<std::string>{"software"} && value.is_string()) return true;
  return keys == std::vector<std::string>{"model"} && value.is_string();
}

Override parse_override(const std::string& text, const std::string& file) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("{}: --set {}: expected PATH=VALUE, e.g. parallelism.tp=16", file, text));
  Override o;
  o.text = text;
  std::stringstream in(text.substr(0, eq));
  for (std::string key; std::getline(in, key, '.');) {
    if (key.empty())
      throw InputError(fmt::format("{}: --set {}: empty key in path \"{}\"", file, text, text.substr(0, eq)));
    o.keys.push_back(key);
  }
  // The instance's default software is read when presets expand, and only where the experiment
  // names none: set afterwards it would change nothing.
  if (o.keys == std::vector<std::string>{"cluster", "software"})
    throw InputError(fmt::format("{}: --set {}: the cluster's default software is read when presets expand; choose the "
                                 "software with --set software=NAME",
                                 file, text));
  if (text.back() == '.')
    throw InputError(fmt::format("{}: --set {}: empty key in path \"{}\"", file, text, text.substr(0, eq)));
  const std::string value = text.substr(eq + 1);
  // JSON when it parses (16, 4.9e3, true, null, "x", {"a":1}), else the text itself.
  check_json_nesting(value, fmt::format("{}: --set {}", file, text.substr(0, eq)));
  o.value = json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (o.value.is_discarded()) {
    o.value = value;
    // JSON text is UTF-8 (the parser checks it in files); a string taken as it stands is not
    // checked, and the resolved experiment could not be written.
    try {
      (void)o.value.dump();
    } catch (const json::type_error&) {
      throw InputError(fmt::format("{}: --set {}=...: expected a JSON value or UTF-8 text, found ill-formed "
                                   "UTF-8 ({})",
                                   file, text.substr(0, eq), describe(o.value)));
    }
  }
  return o;
}

std::vector<Override> parse_overrides(const std::vector<std::string>& texts, const std::string& file,
                                      std::string& label) {
  std::vector<Override> overrides;
  label = file;
  for (const auto& text : texts) {
    overrides.push_back(parse_override(text, file));
    label += (overrides.size() == 1 ? " (with --set " : ", --set ") + text;
  }
  if (!overrides.empty()) label += ")";
  return overrides;
}

bool apply_override(json& document, const Override& o, const std::string& file, WhenAbsent absent) {
  json* node = &document;
  std::string path;
  for (std::size_t i = 0; i < o.keys.size(); ++i) {
    const std::string& key = o.keys[i];
    std::string here = child_path(path, key);
    const bool last = i + 1 == o.keys.size();
    if (!node->is_object())
      throw InputError(fmt::format("{}: --set {}: {} is {}, it has no key \"{}\"", file, o.text,
                                   path.empty() ? "/" : path, describe(*node), key));
    auto it = node->find(key);
    // A file without "software" runs its hardware preset's default; --set software=NAME (or
    // software.preset=NAME) names one.
    if (it == node->end() && path.empty() && key == "software" && o.selects_preset()) {
      if (last) {
        (*node)[key] = o.value;
        return true;
      }
      (*node)[key] = json{{"preset", o.value}};
      return true;
    }
    // A cluster gives its size as "count" (instances; the resolved cluster always does) or as
    // "devices" (ranks): either replaces the other.
    if (it == node->end() && last && path == "/cluster" && (key == "devices" || key == "count")) {
      const char* other = key == "devices" ? "count" : "devices";
      if (node->contains(other)) {
        node->erase(other);
        (*node)[key] = o.value;
        return true;
      }
    }
    // A key shown under "derived" is no input; set, it reaches the parser, which says what it is
    // derived from.
    if (it == node->end() && last && node->contains("derived") && (*node)["derived"].is_object() &&
        (*node)["derived"].contains(key)) {
      (*node)[key] = o.value;
      return true;
    }
    // Keys the resolved experiment leaves out while at their default (the field tables write them
    // back only when set): --set may still set them.
    if (it == node->end() && last && omitted_at_default(path, key)) {
      (*node)[key] = o.value;
      return true;
    }
    if (it == node->end() && absent == WhenAbsent::Report) return false;
    if (it == node->end()) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : node->items()) keys.push_back(k);
      throw InputError(fmt::format("{}: --set {}: {} does not exist (keys of {}: {})", file, o.text, here,
                                   path.empty() ? "/" : path, fmt::join(keys, ", ")));
    }
    if (last) *it = o.value;
    node = &*it;
    path = std::move(here);
  }
  return true;
}

namespace {

bool sets_derived(const Override& o) { return std::find(o.keys.begin(), o.keys.end(), "derived") != o.keys.end(); }

// count and devices each replace the other (apply_override): both given, the later would win
// silently, and which is later would matter.
void check_one_cluster_size(const std::vector<Override>& overrides, const std::string& file) {
  const Override* count = nullptr;
  const Override* devices = nullptr;
  for (const Override& o : overrides) {
    if (o.keys == std::vector<std::string>{"cluster", "count"}) count = &o;
    if (o.keys == std::vector<std::string>{"cluster", "devices"}) devices = &o;
  }
  if (count != nullptr && devices != nullptr)
    throw InputError(fmt::format("{}: --set {} and --set {}: /cluster: expected count (instances) or devices (ranks), "
                                 "found both",
                                 file, count->text, devices->text));
}

}  // namespace

json apply_overrides(const json& document, const std::vector<Override>& overrides, const std::string& file,
                     const std::string& label, const ResolveDocument& resolve) {
  check_one_cluster_size(overrides, file);
  json raw = document;
  bool preset_chosen = false;
  std::vector<const Override*> values;
  for (const Override& o : overrides) {
    if (o.selects_preset()) {
      apply_override(raw, o, file);
      preset_chosen = true;
    } else {
      values.push_back(&o);
    }
  }
  std::stable_sort(values.begin(), values.end(),
                   [](const Override* a, const Override* b) { return a->keys.size() < b->keys.size(); });
  const bool derived_set = std::any_of(values.begin(), values.end(), [](const Override* o) { return sets_derived(*o); });

  // A preset name the file gives is the file's mistake; one --set gives is the override's.
  json edited = expand_presets(raw, preset_chosen ? label : file);
  // Each round applies what has a place; the rest waits for the defaults of the document so far (a
  // key inside an object that an override replaced waits twice). A round on a resolved document
  // that places nothing: the first left is an error naming its path.
  bool resolved = false;
  for (std::vector<const Override*> pending = values; !pending.empty();) {
    std::vector<const Override*> absent;
    for (const Override* o : pending)
      if (!apply_override(edited, *o, file, WhenAbsent::Report)) absent.push_back(o);
    if (!derived_set) drop_derived(edited);
    if (resolved && absent.size() == pending.size()) apply_override(edited, *absent.front(), file, WhenAbsent::Fail);
    if (!absent.empty()) edited = resolve(expand_presets(edited, label), label);
    resolved = true;
    pending = std::move(absent);
  }
  return expand_presets(edited, label);
}

}  // namespace trnsim::config::detail
