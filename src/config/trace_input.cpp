// Experiments whose workload is a trace (contract in trnsim/config/trace_input.hpp).
#include "trnsim/config/trace_input.hpp"

#include <filesystem>

#include "json_reader.hpp"
#include "parse.hpp"
#include "trnsim/config/step_input.hpp"

namespace trnsim::config {

std::string trace_path(const Experiment& ex) {
  if (ex.trace.empty()) return "";
  const std::filesystem::path p(ex.trace);
  if (p.is_absolute() || ex.file.empty()) return p.string();
  return (std::filesystem::path(ex.file).parent_path() / p).lexically_normal().string();
}

TraceInput trace_input(const Experiment& ex) {
  TraceInput t{step_input(ex), trace::read_trace(trace_path(ex))};
  const nlohmann::json& source = t.trace.source;
  if (source.is_object()) {
    for (const char* key : {"model", "training", "parallelism"})
      if (!source.contains(key))
        throw InputError(t.trace.file + ": /source/" + key + ": missing (a source names the model, training and parallelism)");
    t.input.model = detail::parse_model(source.at("model"), t.trace.file, "/source/model");
    t.input.training = detail::parse_training(detail::ObjectReader(source.at("training"), t.trace.file, "/source/training"));
    t.input.parallelism =
        detail::parse_parallelism(detail::ObjectReader(source.at("parallelism"), t.trace.file, "/source/parallelism"));
  }
  return t;
}

nlohmann::json trace_source(const workload::ModelSpec& model, const workload::ResolvedPlan& plan) {
  return {{"model", detail::to_json(model)},
          {"training", detail::to_json(plan.training)},
          {"parallelism", detail::to_json(plan.parallelism)}};
}

}  // namespace trnsim::config
