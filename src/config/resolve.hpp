#pragma once
// Steps of config::parse_experiment besides the per-object parsers (parse.hpp).
#include <functional>
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

// The expanded "cluster" object as the resolved experiment writes it: every default of `cluster`
// filled, its size given as count.
void resolve_cluster(json& expanded_cluster, const hw::ClusterSpec& cluster);

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
// Each of `texts` parsed; `label` receives `file` named with them, for the messages of what they
// edit: "x.json (with --set a=1, --set b=2)", `file` alone when there are none.
std::vector<Override> parse_overrides(const std::vector<std::string>& texts, const std::string& file,
                                      std::string& label);
// What apply_override does where the path does not exist.
enum class WhenAbsent : bool {
  Fail,    // an error naming the path and the keys that do exist
  Report,  // returns false, `document` unchanged
};
// Sets the value at an existing path of `document` (or at a key the parser reads but the document
// leaves out at its default, as the resolved experiment writes it) and returns true.
bool apply_override(json& document, const Override& o, const std::string& file, WhenAbsent absent = WhenAbsent::Fail);

// An expanded document parsed, as the resolved JSON with every default filled (resolved_json);
// `label` names it in messages.
using ResolveDocument = std::function<json(const json& expanded, const std::string& label)>;
// `document` with `overrides` applied as one edit, then its presets expanded: the overrides that
// choose a preset first (so that the others reach into the new preset), then the rest, from the
// shortest path to the longest (an override inside an object another one replaces lands on top of
// it; the same path twice: the later wins). No check runs on a state between two overrides, so
// their order and whether such a state would be valid do not matter. Only an override of a key
// that neither the document nor its presets state (a default, a derived figure) needs the
// defaults: those apply to `resolve` of the document with all the others applied. Derived figures
// are dropped, to be derived afresh, unless an override sets one (the parser then refuses it).
// `file` names the overrides' own errors, `label` (file and overrides) the document's.
json apply_overrides(const json& document, const std::vector<Override>& overrides, const std::string& file,
                     const std::string& label, const ResolveDocument& resolve);

}  // namespace trnsim::config::detail
