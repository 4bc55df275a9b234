#pragma once
// The resolved experiment: everything one simulation needs, every preset expanded.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/hw/specs.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::config {

enum class NetworkModelKind : std::uint8_t { Analytic, Flow };

struct NetworkOptions {
  NetworkModelKind model = NetworkModelKind::Analytic;
  std::string algorithm = "auto";  // collective algorithm, or "auto" (net::choose_algorithm)
};

struct Measured {
  double step_time_s = 0;
  std::string published, derivation, unpublished, note;
};

struct Experiment {
  std::string id, name, source;
  std::string file;                 // where it was read from ("" for built in memory)
  hw::ClusterSpec cluster;
  workload::ModelSpec model;
  workload::TrainingSpec training;
  workload::ParallelismSpec parallelism;
  NetworkOptions network;
  std::optional<Measured> measured;
  nlohmann::json resolved;          // the fully resolved experiment as JSON (reports embed it)
};

}  // namespace trnsim::config
