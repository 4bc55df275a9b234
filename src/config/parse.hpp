#pragma once
// JSON object <-> spec struct, one pair of functions per object of the schema (configs/README.md).
// Both are driven by the struct's field table (field_table.hpp; the tables are in
// hardware_fields.cpp, workload_fields.cpp, software_fields.cpp and experiment_fields.cpp):
// parse_* reads the keys through an ObjectReader (ranges, unknown keys) and checks what one object
// can check alone; to_json writes the struct back with units in the keys. Checks across objects
// are workload's (validation.cpp).
#include <string_view>

#include <nlohmann/json.hpp>

#include "json_reader.hpp"
#include "trnsim/config/experiment.hpp"

namespace trnsim::config::detail {

// The instance keys of `r` (everything but "name"); the caller finishes `r`, which may hold more
// keys (a cluster object holds instance keys as partial overrides of its preset).
hw::InstanceSpec read_instance_fields(ObjectReader& r);
hw::InstanceSpec parse_instance_file(const json& document, const std::string& file);
hw::FabricSpec parse_fabric(ObjectReader r);
// An expanded "cluster" object: its instance keys, its size (count or devices, checked against the
// instance's ranks and UltraServers) and its fabric (load_experiment.cpp).
hw::ClusterSpec parse_cluster(ObjectReader r);

workload::ModelSpec parse_model(const json& value, const std::string& file, const std::string& path);
workload::TrainingSpec parse_training(ObjectReader r);
workload::ParallelismSpec parse_parallelism(ObjectReader r);
NetworkOptions parse_network(ObjectReader r);
Measured parse_measured(ObjectReader r);
// An expanded software object (preset keys, "preset" naming it; software_fields.cpp).
workload::SoftwareSpec parse_software(ObjectReader r);
// A collective library file (configs/collectives/NAME.json).
net::CollectivePolicy parse_collectives(const json& document, const std::string& file);

json to_json(const hw::InstanceSpec& instance);  // without "name"
json to_json(const hw::FabricSpec& fabric);
json to_json(const workload::ModelSpec& model);
json to_json(const workload::TrainingSpec& training);
json to_json(const workload::ParallelismSpec& parallelism);
json to_json(const NetworkOptions& network);
json to_json(const Measured& measured);
json to_json(const workload::SoftwareSpec& software);

// Whether `key` of the experiment object at `path` ("/model", "/training", "/parallelism",
// "/software") is an input the resolved experiment leaves out while at its default.
bool omitted_at_default(std::string_view path, std::string_view key);
bool workload_omitted_at_default(std::string_view path, std::string_view key);  // /model, /training, /parallelism

}  // namespace trnsim::config::detail
