// Preset expansion and the JSON merges of the resolved experiment.
#include "resolve.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "json_reader.hpp"
#include "trnsim/config/presets.hpp"

namespace trnsim::config::detail {
namespace {

void check_known(const std::vector<std::string>& known, const std::string& name, const char* kind,
                 const std::string& file, const std::string& path) {
  if (std::find(known.begin(), known.end(), name) == known.end())
    fail(file, path, fmt::format("unknown {} preset \"{}\" (known: {})", kind, name, fmt::join(known, ", ")));
}

}  // namespace

// Not json::update(patch, true): that throws type_error 312 where an object patches a scalar
// (`"chip": {"hbm_GiB": {...}}`); replacing it lets the field tables report the JSON path, what
// they expected and what they found.
void deep_merge(json& target, const json& patch) {
  if (!target.is_object() || !patch.is_object()) {
    target = patch;
    return;
  }
  for (const auto& [key, value] : patch.items()) deep_merge(target[key], value);
}

void drop_derived(json& document) {
  if (!document.is_object()) return;
  if (const auto it = document.find("derived"); it != document.end() && it->is_object()) document.erase(it);
  for (auto& [key, value] : document.items()) drop_derived(value);
}

void fill_missing(json& target, const json& defaults) {
  if (!target.is_object() || !defaults.is_object()) return;
  for (const auto& [key, value] : defaults.items()) {
    const auto it = target.find(key);
    if (it == target.end()) target[key] = value;
    else fill_missing(*it, value);
  }
}

json expand_presets(const json& document, const std::string& file) {
  if (!document.is_object()) fail(file, "", "expected an experiment object, found " + describe(document));
  json out = document;
  const PresetList known = list_presets();
  // Where /cluster/software is written: the experiment, or its instance preset's file when the
  // experiment names none (an unknown name is that file's mistake).
  std::string cluster_software_file = file, cluster_software_path = "/cluster/software";

  if (out.contains("cluster") && out.at("cluster").is_object()) {
    json& cluster = out.at("cluster");
    if (!cluster.contains("instance"))
      fail(file, "/cluster/instance", "missing required field (expected an instance preset name)");
    const json& instance = cluster.at("instance");
    if (!instance.is_string())
      fail(file, "/cluster/instance", "expected an instance preset name, found " + describe(instance));
    const auto name = instance.get<std::string>();
    check_known(known.instances, name, "instance", file, "/cluster/instance");
    std::string instance_file;
    json expanded = read_instance_json(name, &instance_file);
    if (!cluster.contains("software") && expanded.contains("software")) {
      cluster_software_file = instance_file;
      cluster_software_path = "/software";
    }
    expanded.erase("name");         // the cluster names it in "instance"
    deep_merge(expanded, cluster);  // the experiment's keys override the preset's
    cluster = std::move(expanded);
  }

  // The software: the experiment's ("NAME", or {"preset": NAME, overrides...}), else the hardware
  // preset's default. The preset's keys under the experiment's, "preset" naming it.
  {
    std::string name;
    std::string named_in = file, path = "/software";
    json overrides = json::object();
    if (out.contains("software")) {
      const json& software = out.at("software");
      if (software.is_string()) {
        name = software.get<std::string>();
      } else if (software.is_object() && software.contains("preset") && software.at("preset").is_string()) {
        name = software.at("preset").get<std::string>();
        overrides = software;
        path = "/software/preset";
      } else {
        fail(file, "/software", "expected a software preset name or an object with \"preset\", found " +
                                    describe(software));
      }
    } else if (out.contains("cluster") && out.at("cluster").is_object() && out.at("cluster").contains("software") &&
               out.at("cluster").at("software").is_string()) {
      name = out.at("cluster").at("software").get<std::string>();
      named_in = cluster_software_file;
      path = cluster_software_path;
    }
    if (!name.empty()) {
      check_known(known.software, name, "software", named_in, path);
      json expanded = read_software_json(name);
      expanded.erase("name");
      expanded["preset"] = name;
      deep_merge(expanded, overrides);
      out["software"] = std::move(expanded);
    }
  }

  if (out.contains("model")) {
    json& model = out.at("model");
    if (model.is_string()) {
      const auto name = model.get<std::string>();
      check_known(known.models, name, "model", file, "/model");
      model = read_model_json(name);
    } else if (!model.is_object()) {
      fail(file, "/model", "expected a model preset name or a model object, found " + describe(model));
    }
  }
  return out;
}

}  // namespace trnsim::config::detail
