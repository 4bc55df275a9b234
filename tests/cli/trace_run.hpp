#pragma once
// `trnsim run ... --json` for the trace tests: the JSON report of a run that must succeed.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace trnsim::test {

inline nlohmann::json run_json(const std::string& args) {
  const fs::path out = scratch("report.json");
  const auto r = run(args + " --json '" + out.string() + "'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(slurp(out));
  fs::remove(out);
  return j;
}

}  // namespace trnsim::test
