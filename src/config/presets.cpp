// Presets by name: configs/hardware/NAME.json and configs/models/NAME.json.
#include "trnsim/config/presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "trnsim/config/json_file.hpp"
#include "parse.hpp"
#include "trnsim/error.hpp"

#ifndef TRNSIM_SOURCE_CONFIG_DIR
#error "TRNSIM_SOURCE_CONFIG_DIR must name the source tree's configs/ directory (CMakeLists.txt)"
#endif

namespace trnsim::config {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> names_in(const std::string& subdir) {
  std::vector<std::string> names;
  const fs::path dir = fs::path(config_dir()) / subdir;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());  // directory order is not deterministic
  return names;
}

std::string preset_path(const std::string& kind, const std::string& subdir, const std::string& name) {
  const auto known = names_in(subdir);
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    throw InputError(fmt::format("unknown {} preset \"{}\" (known in {}/{}: {})", kind, name, config_dir(), subdir,
                                 known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
  }
  return (fs::path(config_dir()) / subdir / (name + ".json")).string();
}

// A preset's "name" must be its file name, so that a name always finds one file.
void check_name(const nlohmann::json& document, const std::string& file, const std::string& name) {
  const auto it = document.find("name");
  // Checked here for every kind: the software preset's "name" is dropped before its fields are read.
  if (it != document.end() && !it->is_string())
    detail::fail(file, "/name", fmt::format("expected a string (\"{}\", the file's name), found {}", name, it->dump()));
  if (it != document.end() && it->get<std::string>() != name)
    detail::fail(file, "/name", fmt::format("expected \"{}\" (the file's name), found \"{}\"", name,
                                            it->get<std::string>()));
}

// A software preset file as the experiment's "software" object: its keys, "name" as "preset".
workload::SoftwareSpec software_from(nlohmann::json document, const std::string& file, const std::string& name) {
  document.erase("name");
  document["preset"] = name;
  return detail::parse_software(detail::ObjectReader(document, file, ""));
}

// A preset file: found by name in configs/SUBDIR, its "name" checked, and validated by `validate`
// (document, path), whose errors name the preset file. `file`, if given, receives the path.
template <class Validate>
nlohmann::json read_preset(const std::string& kind, const std::string& subdir, const std::string& name,
                           std::string* file, Validate validate) {
  const std::string path = preset_path(kind, subdir, name);
  nlohmann::json document = read_json_file(path);
  check_name(document, path, name);
  validate(document, path);
  if (file != nullptr) *file = path;
  return document;
}

}  // namespace

std::string config_dir() {
  if (const char* env = std::getenv("TRNSIM_CONFIG_DIR"); env != nullptr && *env != '\0') return env;
  return TRNSIM_SOURCE_CONFIG_DIR;
}

PresetList list_presets() {
  return PresetList{names_in("hardware"), names_in("models"), names_in("software"), names_in("collectives")};
}

nlohmann::json read_instance_json(const std::string& name, std::string* file) {
  return read_preset("instance", "hardware", name, file, [](const nlohmann::json& document, const std::string& path) {
    detail::parse_instance_file(document, path);
  });
}

nlohmann::json read_model_json(const std::string& name, std::string* file) {
  return read_preset("model", "models", name, file, [](const nlohmann::json& document, const std::string& path) {
    detail::parse_model(document, path, "");
  });
}

nlohmann::json read_software_json(const std::string& name, std::string* file) {
  return read_preset("software", "software", name, file,
                     [&name](const nlohmann::json& document, const std::string& path) {
                       (void)software_from(document, path, name);
                     });
}

workload::SoftwareSpec load_software(const std::string& name) {
  std::string file;
  const nlohmann::json document = read_software_json(name, &file);
  return software_from(document, file, name);
}

nlohmann::json read_collectives_json(const std::string& name, std::string* file) {
  // Its content is checked where the experiment's collective library is parsed.
  return read_preset("collective library", "collectives", name, file, [](const nlohmann::json&, const std::string&) {});
}

hw::InstanceSpec load_instance(const std::string& name) {
  std::string file;
  const nlohmann::json document = read_instance_json(name, &file);
  return detail::parse_instance_file(document, file);
}

workload::ModelSpec load_model(const std::string& name) {
  std::string file;
  const nlohmann::json document = read_model_json(name, &file);
  return detail::parse_model(document, file, "");
}

hw::ClusterSpec load_cluster(const std::string& name, int instances) {
  hw::ClusterSpec cluster;
  cluster.instance = load_instance(name);
  if (instances < 1) throw InputError(fmt::format("{}: expected at least 1 instance, found {}", name, instances));
  if (instances % cluster.instance.ultraserver_instances != 0)
    throw InputError(fmt::format("{}: {} instances is not a whole number of UltraServers ({} instances each)",
                                 name, instances, cluster.instance.ultraserver_instances));
  if (instances > 1 && cluster.instance.nics == 0)
    throw InputError(fmt::format("{}: has no EFA network, so it runs as 1 instance only, found {}", name,
                                 instances));
  cluster.instances = instances;
  return cluster;
}

}  // namespace trnsim::config
