// The JSON report (schema documented in README.md, "JSON report"). Wall-clock figures are left
// out so that the same inputs give byte-identical reports.
#include "trnsim/report/step_report.hpp"

namespace trnsim::report {

nlohmann::json to_json(const StepReport& r, const nlohmann::json& experiment) {
  using nlohmann::json;
  json results = {
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
  };
  json parts = json::object();
  for (int i = 0; i < kPartCount; ++i) {
    parts[std::string(part_name(static_cast<Part>(i)))] = r.breakdown.seconds[static_cast<std::size_t>(i)];
  }
  json engines = json::object();
  for (int e = 0; e < cost::kEngineCount; ++e) {
    engines[std::string(engine_name(static_cast<cost::Engine>(e)))] = r.engine_busy[static_cast<std::size_t>(e)];
  }
  json ops = json::object();
  for (int o = 0; o < cost::kOpClassCount; ++o) {
    ops[std::string(op_class_name(static_cast<cost::OpClass>(o)))] = r.op_seconds[static_cast<std::size_t>(o)];
  }
  json memory = json::array();
  for (const auto& m : r.memory) {
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
  json findings = json::array();
  for (const auto& f : r.findings) findings.push_back({{"rule", f.rule}, {"message", f.message}});
  return {
      {"schema_version", kReportSchemaVersion},
      {"experiment", experiment},
      {"results", results},
      {"breakdown", {{"rank", r.breakdown.rank}, {"stage", r.bottleneck_stage}, {"seconds", parts}}},
      {"engine_busy_s", engines},
      {"op_class_s", ops},
      {"memory", memory},
      {"findings", findings},
      {"choices", r.choices},
  };
}

}  // namespace trnsim::report
