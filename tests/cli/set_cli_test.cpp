// `trnsim run --set`: the overrides edit the experiment as a whole, then it is checked once.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

// `FILE ARGS`, FILE quoted for the shell (appended: GCC 12 warns on "'" + a temporary string).
std::string with_file(const std::string& file, const std::string& args = "") {
  std::string words = "'";
  words += file;
  words += "' ";
  words += args;
  return words;
}

// Runs `trnsim run ARGS --json F` and returns the report's text ("" when the run failed).
std::string json_report(const std::string& args) {
  const fs::path json = scratch("report.json");
  std::string words = "run ";
  words += args;
  words += " --json ";
  const Result r = run(words + with_file(json.string()));
  INFO(r.err);
  CHECK(r.code == 0);
  std::string text = slurp(json);
  fs::remove(json);
  return text;
}

// llama3.1-8b-trn2 moved to one trn3 UltraServer: 4 instances of 16 chips, 8 physical cores each
// paired into logical cores of 2 (configs/hardware/trn3-gen1-ultraserver.json), 4 x 64 = 256
// ranks, so tp 8 x pp 1 needs dp 32; the global batch of 256 stays divisible by dp x micro_batch.
const std::string kToUltraServer = "--set cluster.instance=trn3-gen1-ultraserver --set cluster.count=4";
const std::string kDp = "--set parallelism.dp=32";

}  // namespace

TEST_CASE("cli: --set of an UltraServer instance and its count runs as a file stating both") {
  // Checked after each --set, the preset's state after the first (the file's count of 1, not a
  // whole UltraServer of 4) was refused.
  const std::string overridden = json_report(with_file(example("llama3.1-8b-trn2.json"), kToUltraServer + " " + kDp));
  REQUIRE(!overridden.empty());

  auto doc = nlohmann::json::parse(slurp(example("llama3.1-8b-trn2.json")));
  doc["cluster"] = {{"instance", "trn3-gen1-ultraserver"}, {"count", 4}};
  doc["parallelism"]["dp"] = 32;
  const fs::path file = scratch("ultraserver.json");
  std::ofstream(file) << doc.dump(2);
  const std::string stated = json_report(with_file(file.string()));
  fs::remove(file);
  REQUIRE(!stated.empty());

  const auto a = nlohmann::json::parse(overridden), b = nlohmann::json::parse(stated);
  CHECK(a["experiment"]["cluster"]["instance"] == "trn3-gen1-ultraserver");
  CHECK(a["experiment"]["cluster"]["count"] == 4);
  CHECK(a["results"]["step_time_s"].get<double>() > 0);
  CHECK(a["results"]["step_time_s"] == b["results"]["step_time_s"]);
  // The whole resolved experiment, not only the step: every default filled the same way.
  CHECK(a["experiment"] == b["experiment"]);
}

TEST_CASE("cli: --set overrides in either order give byte-identical JSON reports") {
  const std::string e = with_file(example("llama3.1-8b-trn2.json"));
  SECTION("the instance preset before or after its count") {
    const std::string forward = json_report(e + kToUltraServer + " " + kDp);
    const std::string backward =
        json_report(e + kDp + " --set cluster.count=4 --set cluster.instance=trn3-gen1-ultraserver");
    REQUIRE(!forward.empty());
    CHECK(forward == backward);
  }
  SECTION("an object and a key inside it: the key lands on the object whichever comes first") {
    // network={"model":"flow"} replaces the object (its algorithm back to the default "auto");
    // network.algorithm=ring, given before it, would be lost if they applied in the order given.
    const std::string forward = json_report(e + "--set 'network={\"model\":\"flow\"}' --set network.algorithm=ring");
    const std::string backward = json_report(e + "--set network.algorithm=ring --set 'network={\"model\":\"flow\"}'");
    REQUIRE(!forward.empty());
    CHECK(forward == backward);
    const auto j = nlohmann::json::parse(backward);
    CHECK(j["experiment"]["network"]["model"] == "flow");
    CHECK(j["experiment"]["network"]["algorithm"] == "ring");
  }
}

TEST_CASE("cli: --set overrides that together make an invalid cluster are refused naming the path") {
  const std::string e = with_file(example("llama3.1-8b-trn2.json"));
  SECTION("3 instances of an UltraServer of 4, in either order") {
    for (const char* sets : {"--set cluster.instance=trn3-gen1-ultraserver --set cluster.count=3",
                                    "--set cluster.count=3 --set cluster.instance=trn3-gen1-ultraserver"}) {
      const Result r = run("run " + e + sets);
      CHECK(r.code == 2);
      CHECK_THAT(r.err, Catch::Contains("llama3.1-8b-trn2.json (with --set "));
      CHECK_THAT(r.err, Catch::Contains("--set cluster.count=3"));
      CHECK_THAT(r.err, Catch::Contains("/cluster/count: 3 instances is not a whole number of UltraServers (4 "
                                        "instances each)"));
    }
  }
  SECTION("count and devices both set") {
    const Result r = run("run " + e + "--set cluster.devices=128 --set cluster.count=2");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--set cluster.count=2 and --set cluster.devices=128: /cluster: expected count "
                                      "(instances) or devices (ranks), found both"));
  }
  SECTION("the plan no longer matches the cluster's ranks") {
    const Result r = run("run " + e + kToUltraServer);
    CHECK(r.code == 2);
    // 4 trn3-gen1-ultraserver x 64 ranks = 256; the file's tp 8 x pp 1 x dp 8 = 64.
    CHECK_THAT(r.err, Catch::Contains("/parallelism: tp x pp x dp = 8 x 1 x 8 = 64 does not match the cluster's ranks "
                                      "(256 = 4 trn3-gen1-ultraserver x 64 ranks each)"));
  }
}
