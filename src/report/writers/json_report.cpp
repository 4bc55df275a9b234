// The JSON report (contract in json_report.hpp): one function per member of the document, strung
// together by to_json. Objects print their keys sorted, so the order here does not show.
#include "trnsim/report/writers/json_report.hpp"

#include "calibration_bar.hpp"

namespace trnsim::report {
namespace {

using nlohmann::json;

// The experiment as it ran: the fields the file left null ("not published") or out get the
// values the resolved plan chose (ResolvedPlan::choices says why); set fields already agree.
json with_plan(json experiment, const workload::Plan& p, hw::AttentionKernel attention) {
  if (!experiment.is_object()) return experiment;
  experiment["training"]["micro_batch"] = p.micro_batch;
  experiment["training"]["attention"] = trnsim::to_string(attention);
  json& par = experiment["parallelism"];
  par["sequence_parallel"] = p.sequence_parallel;
  par["zero"] = p.zero;
  par["schedule"] = schedule_name(p.schedule);
  par["virtual_stages"] = p.virtual_stages;
  par["recompute"] = recompute_name(p.recompute);
  return experiment;
}

json critical_path_json(const CriticalPath& c) {
  json seconds = json::object();
  for (int i = 0; i < kPathCategoryCount; ++i) {
    seconds[std::string(path_category_name(static_cast<PathCategory>(i)))] = c.seconds[static_cast<std::size_t>(i)];
  }
  json ranks = json::array();
  for (const auto& r : c.by_rank) ranks.push_back({{"rank", r.rank}, {"stage", r.stage}, {"seconds", r.seconds}});
  json top = json::array();
  for (const auto& t : c.top) {
    top.push_back({{"name", t.name},
                   {"category", path_category_name(t.category)},
                   {"seconds", t.seconds},
                   {"count", t.count}});
  }
  return {{"length_s", c.length_s},
          {"segments", c.segment_count},
          {"seconds", seconds},
          {"by_rank", ranks},
          {"top", top}};
}

json links_json(const LinkUtilisation& u) {
  json kinds = json::array();
  for (const auto& k : u.kinds) {
    kinds.push_back({{"kind", trnsim::to_string(k.kind)},
                     {"links", k.links},
                     {"bytes", k.bytes},
                     {"mean_busy_fraction", k.mean_busy_fraction},
                     {"max_busy_fraction", k.max_busy_fraction}});
  }
  json top = json::array();
  for (const auto& l : u.top) {
    top.push_back({{"id", l.id},
                   {"kind", trnsim::to_string(l.kind)},
                   {"src", l.src},
                   {"dst", l.dst},
                   {"bandwidth_Bps", l.bandwidth},
                   {"bytes", l.bytes},
                   {"busy_s", l.busy_s},
                   {"busy_fraction", l.busy_fraction}});
  }
  return {{"by_kind", kinds}, {"top", top}};
}

json results_json(const StepReport& r) {
  return {
      {"step_time_s", r.step_time_s},
      {"sequences_per_s", r.sequences_per_s},
      {"tokens_per_s", r.tokens_per_s},
      {"model_flops_per_step", r.model_flops},
      {"hardware_flops_per_step", r.hardware_flops},
      {"peak_flops_per_s", r.peak_flops},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"ranks", r.ranks},
      {"simulated_ranks", r.simulated_ranks},
      {"tasks", r.tasks},
      {"events", r.events},
      {"fast_forward", r.fast_forward},
  };
}

json breakdown_json(const StepReport& r) {
  json parts = json::object();
  for (int i = 0; i < kPartCount; ++i) {
    parts[std::string(part_name(static_cast<Part>(i)))] = r.breakdown.seconds[static_cast<std::size_t>(i)];
  }
  return {{"rank", r.breakdown.rank}, {"stage", r.bottleneck_stage}, {"seconds", parts}};
}

json engines_json(const std::array<double, cost::kEngineCount>& busy) {
  json engines = json::object();
  for (int e = 0; e < cost::kEngineCount; ++e) {
    engines[std::string(engine_name(static_cast<cost::Engine>(e)))] = busy[static_cast<std::size_t>(e)];
  }
  return engines;
}

json op_classes_json(const std::array<double, cost::kOpClassCount>& seconds) {
  json ops = json::object();
  for (int o = 0; o < cost::kOpClassCount; ++o) {
    ops[std::string(op_class_name(static_cast<cost::OpClass>(o)))] = seconds[static_cast<std::size_t>(o)];
  }
  return ops;
}

json memory_json(const std::vector<StageMemoryReport>& stages) {
  json memory = json::array();
  for (const auto& m : stages) {
    const auto& s = m.memory;
    memory.push_back({{"stage", s.stage},
                      {"parameters", s.parameters},
                      {"weights_bytes", s.weights},
                      {"gradients_bytes", s.gradients},
                      {"optimizer_bytes", s.optimizer},
                      {"activations_bytes", s.activations},
                      {"embedding_logits_bytes", s.embedding_logits},
                      {"workspace_bytes", s.workspace},
                      {"total_bytes", s.total()},
                      {"capacity_bytes", m.capacity},
                      {"units_in_flight", s.units_in_flight},
                      {"fits", m.fits()}});
  }
  return memory;
}

json hbm_bound_json(const StepReport& r) {
  json hbm_bound = json::object();
  for (int o = 0; o < cost::kOpClassCount; ++o) {
    const auto i = static_cast<std::size_t>(o);
    hbm_bound[std::string(op_class_name(static_cast<cost::OpClass>(o)))] = {{"seconds", r.hbm_bound_s[i]},
                                                                           {"excess_s", r.hbm_excess_s[i]}};
  }
  return hbm_bound;
}

json findings_json(const std::vector<Finding>& list) {
  json findings = json::array();
  for (const auto& f : list) {
    findings.push_back({{"rule", f.rule}, {"seconds", f.seconds}, {"evidence", f.message}, {"suggestion", f.suggestion}});
  }
  return findings;
}

}  // namespace

nlohmann::json to_json(const StepReport& r, const nlohmann::json& experiment) {
  nlohmann::json out = {
      {"schema_version", kReportSchemaVersion},
      {"experiment", with_plan(experiment, r.plan, r.attention)},
      {"results", results_json(r)},
      {"breakdown", breakdown_json(r)},
      {"engine_busy_s", engines_json(r.engine_busy)},
      {"op_class_s", op_classes_json(r.op_seconds)},
      {"memory", memory_json(r.memory)},
      {"stage_compute_s", r.stage_compute_s},
      {"hbm_bound_s", hbm_bound_json(r)},
      {"ideal_compute_s", r.ideal_compute_s},
      {"critical_path", critical_path_json(r.critical_path)},
      {"links", links_json(r.links)},
      {"findings", findings_json(r.findings)},
      {"choices", r.choices},
  };
  if (r.calibration) out["calibration"] = calibration_json(*r.calibration);
  if (!r.trace.file.empty()) {
    const auto& t = r.trace;
    out["trace"] = {{"file", t.file},       {"format", t.format},       {"recorded_on", t.cluster_instance},
                    {"nodes", t.nodes},     {"measured_nodes", t.measured_tasks},
                    {"duration_scale", t.duration_scale}, {"ignored_nodes", t.ignored}};
  }
  return out;
}

}  // namespace trnsim::report
