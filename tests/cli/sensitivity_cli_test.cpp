// trnsim sensitivity as a user runs it: the table, the JSON, the same output for any thread count,
// and bad input refused with exit code 2 and a message naming what is wrong.
#include <catch2/catch.hpp>

#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

Result sensitivity(const std::string& more) {
  return run(fmt::format("sensitivity '{}' {}", example("tiny-trn1.json"), more));
}

}  // namespace

TEST_CASE("cli sensitivity: prints the base step and one row per figure, the same for any thread count") {
  const fs::path json_path = scratch("sensitivity.json"), html_one = scratch("one.html"), html_two = scratch("two.html");
  const auto one = sensitivity(fmt::format("--threads 1 --json '{}' --html '{}'", json_path.string(), html_one.string()));
  const auto two = sensitivity(fmt::format("--threads 2 --html '{}'", html_two.string()));
  REQUIRE(one.code == 0);
  REQUIRE(two.code == 0);
  CHECK(one.out == two.out);
  CHECK_THAT(one.out, Catch::Contains("sensitivity: tiny-decoder on 1 x trn1.2xlarge (2 ranks), analytic network"));
  CHECK_THAT(one.out, Catch::Contains("base step time: "));
  CHECK_THAT(one.out, Catch::Contains("each figure raised by +10 % in turn"));
  CHECK_THAT(one.out, Catch::Contains("tensor-engine peak"));
  // trn1.2xlarge: one chip, no EFA.
  CHECK_THAT(one.out, Catch::Contains("NeuronLink bandwidth: trn1.2xlarge has one chip: no chip-to-chip link"));
  CHECK_THAT(one.out, Catch::Contains("EFA bandwidth: trn1.2xlarge has no EFA"));
  CHECK_THAT(one.out, Catch::Contains("HBM capacity 32 -> 35.2 GiB per chip: the same plan runs as fast as before"));
  const auto j = nlohmann::json::parse(slurp(json_path));
  fs::remove(json_path);
  CHECK(j["kind"] == "trnsim-sensitivity");
  CHECK(j["step"] == 0.1);
  CHECK(j["figures"][0]["name"].is_string());
  CHECK(j["base"]["status"] == "simulated");
  // The page: the same bytes for any thread count, one table row per figure (and a header row).
  const std::string page = slurp(html_one);
  CHECK(page == slurp(html_two));
  fs::remove(html_one);
  fs::remove(html_two);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  std::size_t rows = 0;
  for (std::size_t at = page.find("<tr>"); at != std::string::npos; at = page.find("<tr>", at + 1)) ++rows;
  // figures + header, then the capacity table: 2 rows + header.
  CHECK(rows == j["figures"].size() + 1 + 3);
}

TEST_CASE("cli sensitivity: bad input exits 2 and names it") {
  for (const char* step : {"0", "0%", "-100%", "abc"}) {
    INFO(step);
    const auto r = sensitivity(fmt::format("--step '{}'", step));
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--step"));
    CHECK(r.out.empty());
  }
  const auto set = sensitivity("--set parallelism.tp=3");
  CHECK(set.code == 2);
  CHECK_THAT(set.err, Catch::Contains("tiny-trn1.json"));
  CHECK_THAT(set.err, Catch::Contains("cannot run"));
  const auto missing = run("sensitivity /nonexistent/experiment.json");
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent/experiment.json"));
}

TEST_CASE("cli sensitivity: --max-memory refuses it before the first simulation, --force runs it") {
  // The experiment's plan is simulated first, alone: its estimate is what `trnsim run` gives it.
  const auto single = run(fmt::format("run '{}' --max-memory 1kB", example("tiny-trn1.json")));
  const std::string key = "the step would need about ";
  REQUIRE(single.err.find(key) != std::string::npos);
  const std::size_t from = single.err.find(key) + key.size();
  const std::string x = single.err.substr(from, single.err.find(" of memory", from) - from);
  const auto r = sensitivity("--max-memory 1kB");
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: the sensitivity of ") && Catch::Contains("would need about "));
  CHECK_THAT(r.err, Catch::Contains("its largest plan (tp 2, pp 1, dp 1, micro-batch 1) about " + x + " to simulate"));
  CHECK_THAT(r.err, Catch::Contains("x 1 simulated at once") && Catch::Contains("limit of 1e-06 GB") &&
                        Catch::Contains("--force"));
  CHECK(sensitivity("--max-memory 1kB --force").code == 0);
}
