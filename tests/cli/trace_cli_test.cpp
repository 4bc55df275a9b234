// trnsim run --trace F [--trace-ranks LIST], run as a user runs it.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

// process_name of `pid` in a Chrome trace, or "" when it has none.
std::string process_name(const nlohmann::json& trace, int pid) {
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name" && e.at("pid") == pid) return e.at("args").at("name");
  }
  return "";
}

}  // namespace

TEST_CASE("cli: run --trace writes a Chrome trace with one process per traced rank") {
  const fs::path f = scratch("trace.json");
  SECTION("default: tiny-trn1 is TP 2 x PP 1, so one stage and its rank 0 (instance 0, chip 0, core 0)") {
    const auto r = run("run '" + example("tiny-trn1.json") + "' --trace '" + f.string() + "'");
    REQUIRE(r.code == 0);
    const auto trace = nlohmann::json::parse(slurp(f));
    CHECK_THAT(process_name(trace, 0), Catch::StartsWith("rank 0: instance 0 / chip 0 / core 0"));
    CHECK(trace.at("otherData").at("trnsim").at("traced_ranks") == nlohmann::json::array({0}));
  }
  SECTION("--trace-ranks 1: rank 1 is not simulated (symmetric), shown as its stage's rank 0") {
    const auto r = run("run '" + example("tiny-trn1.json") + "' --trace '" + f.string() + "' --trace-ranks 1");
    REQUIRE(r.code == 0);
    const auto trace = nlohmann::json::parse(slurp(f));
    CHECK(trace.at("otherData").at("trnsim").at("requested_ranks") == nlohmann::json::array({1}));
    CHECK(trace.at("otherData").at("trnsim").at("traced_ranks") == nlohmann::json::array({0}));
  }
  fs::remove(f);
}

TEST_CASE("cli: bad --trace-ranks exit 2 and say what was expected") {
  const fs::path f = scratch("trace.json");
  const auto out_of_range = run("run '" + example("tiny-trn1.json") + "' --trace '" + f.string() + "' --trace-ranks 0-2");
  CHECK(out_of_range.code == 2);
  CHECK_THAT(out_of_range.err, Catch::Contains("--trace-ranks: expected ranks in [0, 2)"));
  const auto syntax = run("run '" + example("tiny-trn1.json") + "' --trace '" + f.string() + "' --trace-ranks x");
  CHECK(syntax.code == 2);
  CHECK_THAT(syntax.err, Catch::Contains("--trace-ranks: expected a comma-separated list"));
  // --trace-ranks alone has nothing to select for.
  CHECK(run("run '" + example("tiny-trn1.json") + "' --trace-ranks 0").code == 2);
  CHECK(!fs::exists(f));
}

TEST_CASE("cli: run --help lists --trace and --trace-ranks") {
  const auto r = run("run --help");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("--trace "));
  CHECK_THAT(r.out, Catch::Contains("--trace-ranks"));
}
