#pragma once
// Steps of config::parse_experiment besides the per-object parsers (parse.hpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/config/experiment.hpp"

namespace trnsim::config::detail {

using nlohmann::json;

// Objects merge key by key (recursively), any other value of `patch` replaces. Not
// json::update(patch, true): that is the same for arrays and nulls, but throws type_error 312
// where `target` holds a number, string or array and `patch` an object ("chips": {...} in a
// cluster), which must stay an input error that the parser names by its path.
void deep_merge(json& target, const json& patch);
// Adds the keys of `defaults` that `target` lacks (recursively); `target`'s values win.
void fill_missing(json& target, const json& defaults);

// The document with its presets expanded: cluster.instance's preset file under the cluster's own
// keys (which override it), a model name replaced by the preset's object. Unknown preset names
// are errors at /cluster/instance or /model.
json expand_presets(const json& document, const std::string& file);

// The expanded document -> structs. Checks each object alone (types, ranges, unknown keys).
Experiment parse_expanded(const json& expanded, const std::string& file);

// The resolved JSON: `expanded` with every default of `ex` filled; cluster.devices becomes
// cluster.count.
json resolved_json(const json& expanded, const Experiment& ex);

// Checks across objects (parallel plan vs model and cluster, batch vs plan).
void validate(const Experiment& ex, const std::string& file);

// Removes every "derived" object (figures the parser derives and writes back, field_table.hpp), so
// that a document edited by --set is derived afresh instead of checked against stale figures.
void drop_derived(json& document);

// One --set PATH=VALUE.
struct Override {
  std::string text;     // as given, for messages
  std::vector<std::string> keys;  // PATH split at '.'
  json value;           // VALUE as JSON when it parses, else the string
  bool selects_preset() const;    // cluster.instance, or model given a name
};
Override parse_override(const std::string& text, const std::string& file);
// Sets the value at an existing path of `document`; a path that does not exist is an error
// naming it and the keys that do.
void apply_override(json& document, const Override& o, const std::string& file);

}  // namespace trnsim::config::detail
