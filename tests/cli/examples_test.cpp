// End-to-end: every bundled example runs, and its report keeps the invariants.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

TEST_CASE("examples: every file in configs/examples runs and its breakdown adds up to the step time") {
  const fs::path dir = fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 5);
  for (const auto& file : files) {
    INFO(file.string());
    const fs::path out = scratch("report.json");
    const auto r = run("run '" + file.string() + "' --json '" + out.string() + "'");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(slurp(out));
    fs::remove(out);
    const double step = j["results"]["step_time_s"].get<double>();
    CHECK(step > 0);
    double sum = 0;
    for (const auto& [part, seconds] : j["breakdown"]["seconds"].items()) {
      CHECK(seconds.get<double>() >= 0);
      sum += seconds.get<double>();
    }
    CHECK(sum == Approx(step).epsilon(1e-9));
    // MFU is a fraction of peak. The executed FLOPs include the model's, less the masked half of
    // causal attention (which MFU's convention counts and no kernel executes): at least the
    // non-attention part plus half the attention part, so more than half of the model's FLOPs.
    CHECK(j["results"]["mfu"].get<double>() > 0);
    CHECK(j["results"]["mfu"].get<double>() < 1);
    CHECK(j["results"]["hfu"].get<double>() < 1);
    CHECK(j["results"]["hardware_flops_per_step"].get<double>() > j["results"]["model_flops_per_step"].get<double>() * 0.5);
    for (const auto& m : j["memory"]) CHECK(m["fits"].get<bool>());
  }
}

TEST_CASE("examples: the chip's BF16 peak is the one declaration of the tensor engine's speed") {
  // llama3.1-8b-trn2 is compute-bound (its bottleneck rank computes for ~90 % of the step), so a
  // chip with twice the published peak must run it faster; MFU is then quoted against the new
  // peak: model FLOPs = mfu x step x peak, the same in both runs (the model did not change).
  const fs::path a = scratch("a.json"), b = scratch("b.json");
  // `trnsim run llama3.1-8b-trn2.json EXTRA`
  const auto run_example = [](const std::string& extra) {
    std::string args = "run '";
    args += example("llama3.1-8b-trn2.json");
    args += "' ";
    args += extra;
    return run(args);
  };
  REQUIRE(run_example("--json '" + a.string() + "'").code == 0);
  REQUIRE(run_example("--set cluster.chip.peak.bf16_tflops=1334 --json '" + b.string() + "'").code == 0);
  const auto ra = nlohmann::json::parse(slurp(a))["results"], rb = nlohmann::json::parse(slurp(b))["results"];
  fs::remove(a);
  fs::remove(b);
  const double step_a = ra["step_time_s"].get<double>(), step_b = rb["step_time_s"].get<double>();
  CHECK(step_b < step_a);  // before the peak was the one declaration, the step did not change
  CHECK(ra["model_flops_per_step"].get<double>() == rb["model_flops_per_step"].get<double>());
  CHECK(rb["mfu"].get<double>() * step_b * 2 == Approx(ra["mfu"].get<double>() * step_a).epsilon(1e-9));
  // The clock the peak implies cannot be set on its own.
  const auto r = run_example("--set cluster.chip.core.tensor_clock_GHz=4.8");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/cluster/chip/core/tensor_clock_GHz: derived from /cluster/chip/peak/bf16_tflops"));
}
