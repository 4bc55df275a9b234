// `trnsim run --html F`: the page is written next to the JSON report of the same run, shows the
// run's findings, and an unwritable path is bad input.
#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

TEST_CASE("cli: run --html writes a page holding the JSON report's step time") {
  const fs::path html = scratch("r.html"), json_file = scratch("r.json");
  const auto r = run("run '" + example("tiny-trn1.json") + "' --html '" + html.string() + "' --json '" +
                     json_file.string() + "'");
  REQUIRE(r.code == 0);
  const std::string page = slurp(html);
  const double step = nlohmann::json::parse(slurp(json_file))["results"]["step_time_s"].get<double>();
  fs::remove(html);
  fs::remove(json_file);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  const std::string key = "id=\"step-time\" data-seconds=\"";
  const auto at = page.find(key);
  REQUIRE(at != std::string::npos);
  CHECK(std::strtod(page.c_str() + at + key.size(), nullptr) == step);
}

TEST_CASE("cli: run --html lists the out-of-memory finding and marks the stage") {
  // 1 MiB of HBM per chip cannot hold tiny-trn1's ~0.02 GiB per rank (see cli_test.cpp).
  const fs::path html = scratch("oom.html");
  const auto r = run("run '" + example("tiny-trn1.json") + "' --set cluster.chip.hbm_GiB=0.001 --html '" +
                     html.string() + "'");
  REQUIRE(r.code == 0);
  const std::string page = slurp(html);
  fs::remove(html);
  CHECK_THAT(page, Catch::Contains("<li><code>out_of_memory</code>"));
  CHECK_THAT(page, Catch::Contains("OUT OF MEMORY"));
}

TEST_CASE("cli: run --html to an unwritable path exits 2 and names the path") {
  const auto r = run("run '" + example("tiny-trn1.json") + "' --html /nonexistent-dir/r.html");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/nonexistent-dir/r.html"));
}
