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
    // MFU is a fraction of peak, and the executed FLOPs include the model's.
    CHECK(j["results"]["mfu"].get<double>() > 0);
    CHECK(j["results"]["mfu"].get<double>() < 1);
    CHECK(j["results"]["hardware_flops_per_step"].get<double>() >= j["results"]["model_flops_per_step"].get<double>() * 0.99);
    for (const auto& m : j["memory"]) CHECK(m["fits"].get<bool>());
  }
}
