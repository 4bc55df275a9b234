// config::load_experiment: read, apply the --set overrides as one edit, expand presets, parse, validate, resolve.
#include <fmt/core.h>

#include "trnsim/config/json_file.hpp"
#include "parse.hpp"
#include "resolve.hpp"
#include "trnsim/config/experiment.hpp"

namespace trnsim::config {
namespace detail {
namespace {

// Bounds that keep ClusterSpec::chips() (an int) from overflowing: 2^20 instances of <= 1024 chips.
constexpr std::int64_t kMaxInstances = 1 << 20;

}  // namespace

hw::ClusterSpec parse_cluster(ObjectReader r) {
  hw::ClusterSpec cluster;
  const std::string name = r.string("instance");
  cluster.instance = read_instance_fields(r);
  cluster.instance.name = name;
  const hw::InstanceSpec& inst = cluster.instance;

  const bool has_count = r.present("count");
  const bool has_devices = r.present("devices");
  if (has_count == has_devices)
    r.fail_at(has_count ? "devices" : "count",
              has_count ? "give count (instances) or devices (ranks), not both"
                        : "missing required field (expected count, the number of instances, or devices, "
                          "the number of ranks)");
  if (has_count) {
    cluster.instances = static_cast<int>(r.integer("count", 1, kMaxInstances));
  } else {
    // devices = ranks: GPUs, or logical NeuronCores (trn1 32 per instance, trn2 LNC=2 64).
    const std::int64_t devices = r.integer("devices", 1, kMaxInstances * inst.ranks());
    if (devices % inst.ranks() != 0)
      r.fail_at("devices", fmt::format("{} is not a whole number of {} instances ({} ranks each)", devices,
                                       name, inst.ranks()));
    cluster.instances = static_cast<int>(devices / inst.ranks());
  }
  const std::string size_key = has_count ? "count" : "devices";
  if (cluster.instances % inst.ultraserver_instances != 0)
    r.fail_at(size_key, fmt::format("{} instances is not a whole number of UltraServers ({} instances each)",
                                    cluster.instances, inst.ultraserver_instances));
  if (cluster.instances > 1 && inst.nics == 0)
    r.fail_at(size_key, fmt::format("{} has no EFA network, so it runs as 1 instance only, found {}", name,
                                    cluster.instances));
  if (auto fabric = r.optional_object("fabric")) cluster.fabric = parse_fabric(*fabric);
  r.finish();
  return cluster;
}

namespace {

// "workload": {"trace": PATH}
std::string parse_workload(ObjectReader r) {
  std::string trace = r.string("trace");
  if (trace.empty()) r.fail_at("trace", "expected the path of a trace file, found \"\"");
  r.finish();
  return trace;
}

}  // namespace

Experiment parse_expanded(const json& expanded, const std::string& file) {
  ObjectReader r(expanded, file, "");
  Experiment ex;
  ex.id = r.string_or("id", "");
  ex.name = r.string_or("name", "");
  ex.source = r.string_or("source", "");
  r.documentation();
  ex.cluster = parse_cluster(r.object("cluster"));
  if (auto workload = r.optional_object("workload")) ex.trace = parse_workload(*workload);
  if (ex.trace.empty()) {
    if (!r.present("model")) r.fail_at("model", "missing required field (expected a model preset name or object)");
    ex.model = parse_model(*r.raw("model"), file, "/model");
    ex.training = parse_training(r.object("training"));
    ex.parallelism = parse_parallelism(r.object("parallelism"));
  } else {
    // The trace is the workload: its own "source" (if any) describes the model, not the experiment.
    for (const char* key : {"model", "training", "parallelism"})
      if (r.present(key)) r.fail_at(key, "not with \"workload\": {\"trace\": ...} (the trace is the workload)");
  }
  if (!r.present("software"))
    r.fail_at("software", "missing (expected a software preset name; the hardware preset names none)");
  ex.software = parse_software(r.object("software"));
  apply_collective_runtime(ex.cluster.instance, ex.software.collectives, file);
  if (auto network = r.optional_object("network")) ex.network = parse_network(*network);
  if (r.has("measured")) ex.measured = parse_measured(r.object("measured"));
  r.raw("measured");  // null: nothing measured
  r.finish();
  return ex;
}

void resolve_cluster(json& expanded_cluster, const hw::ClusterSpec& cluster) {
  json defaults = to_json(cluster.instance);
  defaults["instance"] = cluster.instance.name;
  defaults["fabric"] = to_json(cluster.fabric);
  fill_missing(expanded_cluster, defaults);
  expanded_cluster.erase("devices");
  expanded_cluster["count"] = cluster.instances;
}

json resolved_json(const json& expanded, const Experiment& ex) {
  json defaults{{"id", ex.id},
                {"name", ex.name},
                {"source", ex.source},
                {"software", to_json(ex.software)},
                {"network", to_json(ex.network)}};
  if (ex.trace.empty()) {
    defaults["model"] = to_json(ex.model);
    defaults["training"] = to_json(ex.training);
    defaults["parallelism"] = to_json(ex.parallelism);
  }
  if (ex.measured) defaults["measured"] = to_json(*ex.measured);
  json out = expanded;
  fill_missing(out, defaults);
  resolve_cluster(out["cluster"], ex.cluster);
  return out;
}

}  // namespace detail

Experiment parse_experiment(const nlohmann::json& document, const std::string& file,
                            const std::vector<std::string>& override_texts, PlanCheck plan_check) {
  using namespace detail;
  std::string label;
  const std::vector<Override> overrides = parse_overrides(override_texts, file, label);

  const json expanded = overrides.empty() ? expand_presets(document, file)
                                          : apply_overrides(document, overrides, file, label,
                                                            [](const json& doc, const std::string& doc_label) {
                                                              return resolved_json(doc, parse_expanded(doc, doc_label));
                                                            });
  Experiment ex = parse_expanded(expanded, label);
  if (plan_check == PlanCheck::Now && ex.trace.empty()) validate(ex, label);
  ex.file = file;
  ex.resolved = resolved_json(expanded, ex);
  return ex;
}

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_experiment(read_json_file(path), path, overrides);
}

}  // namespace trnsim::config
