// export-trace and trace replay end to end: a step exported as a trace and replayed on the same
// cluster is the same step, to the picosecond.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace_run.hpp"

using namespace trnsim::test;
using nlohmann::json;

namespace {

std::vector<fs::path> examples() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The example's experiment with its model, training and parallelism replaced by the trace.
fs::path trace_experiment(const fs::path& example, const fs::path& trace) {
  json doc = json::parse(slurp(example));
  for (const char* key : {"model", "training", "parallelism", "measured"}) doc.erase(key);
  doc["workload"] = {{"trace", trace.string()}};
  const fs::path out = scratch("trace-experiment.json");
  std::ofstream(out) << doc.dump(1);
  return out;
}


}  // namespace

TEST_CASE("export-trace: every example replayed from its exported trace has the model run's step time, to the picosecond") {
  const auto files = examples();
  REQUIRE(files.size() >= 5);
  for (const auto& file : files) {
    INFO(file.string());
    const fs::path trace = scratch("trace.json");
    const auto e = run("export-trace '" + file.string() + "' -o '" + trace.string() + "'");
    INFO(e.err);
    REQUIRE(e.code == 0);
    const fs::path ex = trace_experiment(file, trace);
    const json model_run = run_json("run '" + file.string() + "'");
    const json trace_run = run_json("run '" + ex.string() + "'");
    // Seconds are an int64 of picoseconds / 1e12: equal doubles are equal picoseconds.
    CHECK(trace_run["results"]["step_time_s"].get<double>() == model_run["results"]["step_time_s"].get<double>());
    // The exported source names the model and its plan: MFU is the model run's.
    CHECK(trace_run["results"]["mfu"].get<double>() == model_run["results"]["mfu"].get<double>());
    CHECK(trace_run["trace"]["nodes"].get<std::size_t>() == model_run["results"]["tasks"].get<std::size_t>());
    CHECK(trace_run["trace"]["measured_nodes"].get<std::size_t>() == 0);
    fs::remove(trace);
    fs::remove(ex);
  }
}

TEST_CASE("export-trace: all ranks or the symmetric ones, with pipeline sends, on both network models: the same step") {
  const fs::path tiny = example("tiny-trn1.json");
  // tp 2 (collectives only), then pp 2 (a pipeline: every transfer a send and a recv).
  for (const std::string plan : {"", " --set parallelism.tp=1 --set parallelism.pp=2"}) {
    for (const std::string mode : {"", " --all-ranks"}) {
      for (const std::string net : {"analytic", "flow"}) {
        INFO(plan << mode << " " << net);
        const fs::path trace = scratch("trace.json");
        REQUIRE(run("export-trace '" + tiny.string() + "' -o '" + trace.string() + "'" + plan + mode).code == 0);
        const fs::path ex = trace_experiment(tiny, trace);
        const json model_run = run_json("run '" + tiny.string() + "' --network " + net + plan);
        const json trace_run = run_json("run '" + ex.string() + "' --network " + net);
        // Equal picoseconds in both modes: with --all-ranks a compute task and a collective that
        // start at one instant arrive in another order than in the symmetric replay, and the
        // executor prices a task that has done no work afresh (replay/executor.cpp, reprice).
        CHECK(trace_run["results"]["step_time_s"].get<double>() == model_run["results"]["step_time_s"].get<double>());
        if (!plan.empty()) CHECK(slurp(trace).find("\"kind\":\"recv\"") != std::string::npos);
        fs::remove(trace);
        fs::remove(ex);
      }
    }
  }
}
