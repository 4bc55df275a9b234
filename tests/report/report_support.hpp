#pragma once
// Helpers for report tests: an experiment in memory (or a bundled example), simulated and analysed
// through the same path as `trnsim run`.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/config/experiment.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::test {

// A time of v microseconds, fractions allowed (sim::Time::us takes whole microseconds).
inline sim::Time us(double v) { return sim::Time::seconds(v * 1e-6); }

struct AnalysedRun {
  config::Experiment experiment;
  replay::StepInput input;
  replay::StepRun run;
  report::StepReport report;
};

inline AnalysedRun analyse(config::Experiment ex) {
  AnalysedRun a;
  a.input = config::step_input(ex);
  a.run = replay::simulate_step(a.input);
  a.report = report::analyze(a.input, a.run);
  a.experiment = std::move(ex);
  return a;
}

inline AnalysedRun analyse_json(const nlohmann::json& doc, const std::vector<std::string>& overrides = {}) {
  return analyse(config::parse_experiment(doc, "mem.json", overrides));
}

inline AnalysedRun analyse_file(const std::string& relative, const std::vector<std::string>& overrides = {}) {
  return analyse(config::load_experiment(std::string(TRNSIM_TEST_SOURCE_DIR) + "/" + relative, overrides));
}

// A decoder of `layers` x hidden 1024 (16 heads, ffn 4096, vocabulary 1024: a small head, so
// every pipeline stage computes about the same) on `instances` trn1.32xlarge.
inline nlohmann::json small_decoder(int instances, int layers, int tp, int pp, int dp, int global_batch) {
  nlohmann::json doc = {
      {"name", "small-decoder"},
      {"cluster", {{"instance", "trn1.32xlarge"}, {"count", instances}}},
      {"model",
       {{"name", "small"}, {"layers", layers}, {"hidden", 1024}, {"heads", 16}, {"kv_heads", 16},
        {"ffn_hidden", 4096}, {"vocab", 1024}, {"mlp", "gelu"}, {"norm", "layernorm"}}},
      {"training",
       {{"seq_len", 1024}, {"global_batch", global_batch}, {"micro_batch", 1}, {"dtype", "bf16"}, {"optimizer", "adamw"}}},
      {"parallelism", {{"tp", tp}, {"pp", pp}, {"dp", dp}, {"sequence_parallel", false}, {"zero", 0},
                       {"schedule", "1f1b"}, {"recompute", "none"}}}};
  return doc;
}

}  // namespace trnsim::test
