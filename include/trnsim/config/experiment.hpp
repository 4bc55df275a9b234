#pragma once
// The resolved experiment: everything one simulation needs, every preset expanded.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/hw/specs.hpp"
#include "trnsim/net/network_models.hpp"
#include "trnsim/workload/software.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::config {

// Configuration keys: kNetworkFields in src/config/experiment_fields.cpp.
struct NetworkOptions {
  net::NetworkModelKind model = net::NetworkModelKind::Analytic;
  // "auto" (the software's collective library chooses), "optimal" (the analytic optimum) or an
  // algorithm forced on every collective (net::parse_algorithm, net::ClosedForm::choose).
  std::string algorithm = "auto";
};

// Configuration keys: kMeasuredFields in src/config/experiment_fields.cpp.
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
  workload::SoftwareSpec software;  // the named stack with the experiment's overrides
  NetworkOptions network;
  std::optional<Measured> measured;
  // "workload": {"trace": PATH}: the step is read from an execution trace instead of built from
  // model, training and parallelism (which the experiment then leaves out). PATH as written,
  // relative to the experiment file's folder (trace_path resolves it).
  std::string trace;
  nlohmann::json resolved;          // the fully resolved experiment as JSON (reports embed it)
};

}  // namespace trnsim::config

#include <vector>

namespace trnsim::config {

// Reads an experiment file (configs/README.md, "Experiment"), expands its presets, applies the
// `--set PATH=VALUE` overrides (dotted PATH into the resolved experiment, VALUE parsed as JSON
// when it parses, else taken as a string) and validates the result. Throws InputError naming the
// file, the JSON path, what was expected and what was found.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});

// Whether parsing checks the parallel plan against the model, batch and cluster
// (workload::check_plan). Deferred: the caller checks each plan it derives (`trnsim sweep`, whose
// --vary may change the cluster under a plan it then replaces).
enum class PlanCheck : bool { Now, Deferred };

// Resolves the cluster's collective figures (hw::Calibration: launch, step, message, stream
// rate): each one the hardware file or --set states, else the runtime release `library` names
// (its costs; the stream rate as the chip's DMA engines per collective core x engine rate x the
// release's stream efficiency, or no limit where the chip publishes no engines). Throws
// InputError naming `file` and /cluster/calibration/KEY when a figure has neither. O(releases).
void apply_collective_runtime(hw::InstanceSpec& instance, const net::CollectivePolicy& library, const std::string& file);

// The same from a document in memory; `file` names it in messages.
Experiment parse_experiment(const nlohmann::json& document, const std::string& file,
                            const std::vector<std::string>& overrides = {}, PlanCheck plan_check = PlanCheck::Now);

}  // namespace trnsim::config
