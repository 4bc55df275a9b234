// A training dtype the software preset states no precision recipe for runs the generic recipe
// (workload::default_recipe): the report says so, and `run --strict` refuses it.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

// The findings of a JSON report with this rule.
int count_rule(const nlohmann::json& report, const std::string& rule) {
  int n = 0;
  for (const auto& f : report["findings"]) n += f["rule"] == rule ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("cli: a dtype the software has no precision recipe for is reported, and refused by --strict") {
  // tiny-trn1 runs its instance's software, neuronx-distributed, whose precision block names bf16
  // only (configs/software/neuronx-distributed.json).
  const std::string tiny = "run '" + example("tiny-trn1.json") + "'";
  const fs::path json = scratch("report.json");

  SECTION("fp8 under neuronx-distributed: the generic fp8 recipe, said in the text and the JSON") {
    const auto r = run(tiny + " --set training.dtype=fp8 --json '" + json.string() + "'");
    REQUIRE(r.code == 0);  // a finding, not an error
    // The generic recipe of fp8 (README, training.dtype): low-precision (bf16) weights and
    // gradients, fp32 accumulation, master copy and moments.
    CHECK_THAT(r.out, Catch::Contains("[generic_precision_recipe]"));
    CHECK_THAT(r.out, Catch::Contains("software neuronx-distributed has no precision recipe for training dtype fp8: "
                                      "the generic fp8 recipe ran (weights bf16, gradients bf16, accumulation fp32, "
                                      "master weights fp32, optimizer states fp32)"));
    CHECK_THAT(r.out, Catch::Contains("run a dtype the software has a recipe for (bf16)"));
    const auto report = nlohmann::json::parse(slurp(json));
    CHECK(count_rule(report, "generic_precision_recipe") == 1);
    CHECK(report["findings"].back()["rule"] == "generic_precision_recipe");  // 0 s: listed last
    CHECK(report["findings"].back()["seconds"] == 0);
    CHECK(run(tiny + " --set training.dtype=fp8 --strict").code == 1);
  }

  SECTION("bf16 under neuronx-nemo-megatron, whose only recipe is bf16-sr") {
    const auto r = run(tiny + " --set software=neuronx-nemo-megatron --strict");
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("software neuronx-nemo-megatron has no precision recipe for training dtype bf16"));
    CHECK_THAT(r.out, Catch::Contains("(bf16-sr)"));
  }

  SECTION("the software's own recipe: no finding, --strict passes") {
    const auto r = run(tiny + " --strict --json '" + json.string() + "'");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, !Catch::Contains("generic_precision_recipe"));
    CHECK(count_rule(nlohmann::json::parse(slurp(json)), "generic_precision_recipe") == 0);
    // bf16-sr is neuron-pytorch-dp's own, and so is bf16 (its autocast recipe).
    CHECK(run(tiny + " --set software=neuron-pytorch-dp --set training.dtype=bf16-sr --strict").code == 0);
    CHECK(run(tiny + " --set software=neuron-pytorch-dp --strict").code == 0);
  }
  fs::remove(json);
}
