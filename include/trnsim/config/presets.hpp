#pragma once
// Hardware and model presets by name: configs/hardware/NAME.json and configs/models/NAME.json
// under the preset directory (env TRNSIM_CONFIG_DIR, else the source tree's configs/).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/hw/specs.hpp"
#include "trnsim/workload/software.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::config {

// The directory holding hardware/, models/, examples/ and validation/.
std::string config_dir();

// Preset names, sorted.
struct PresetList {
  std::vector<std::string> instances;
  std::vector<std::string> models;
  std::vector<std::string> software;     // configs/software
  std::vector<std::string> collectives;  // configs/collectives: collective libraries
};
PresetList list_presets();

// A validated preset. Throws InputError for an unknown name (listing the known ones) or a bad file.
hw::InstanceSpec load_instance(const std::string& name);
workload::ModelSpec load_model(const std::string& name);
// A software preset (configs/software/NAME.json) with its collective library read in.
workload::SoftwareSpec load_software(const std::string& name);

// `instances` instances of the preset on the default fabric (non-blocking, switch latency within
// the EFA latency); instances must be >= 1 and a whole number of UltraServers.
hw::ClusterSpec load_cluster(const std::string& name, int instances);
// The same with `--set PATH=VALUE` overrides of its cluster block, PATH as in an experiment's
// ("cluster.intra.bandwidth_GBps", "cluster.calibration.KEY", "cluster.count"), applied and checked
// as `trnsim run --set` does (cluster_overrides.cpp). `label` names the cluster in messages;
// a PATH outside the cluster, or one choosing the instance, is an InputError.
hw::ClusterSpec load_cluster(const std::string& name, int instances, const std::vector<std::string>& overrides,
                             const std::string& label);

// The preset file's JSON, validated; `file` receives its path (for messages).
nlohmann::json read_instance_json(const std::string& name, std::string* file = nullptr);
nlohmann::json read_model_json(const std::string& name, std::string* file = nullptr);
// Software presets (configs/software/NAME.json) and collective libraries
// (configs/collectives/NAME.json): the file's JSON, its "name" checked against the file name.
nlohmann::json read_software_json(const std::string& name, std::string* file = nullptr);
nlohmann::json read_collectives_json(const std::string& name, std::string* file = nullptr);

}  // namespace trnsim::config
