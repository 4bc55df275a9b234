// trnsim run --csv: rows appended under one header, as a user runs it.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"
#include "trnsim/report/writers/csv_report.hpp"

using namespace trnsim::test;

TEST_CASE("cli run: --csv appends one row per run under a single header") {
  const fs::path csv = scratch("runs.csv");
  fs::remove(csv);
  const auto r1 = run("run '" + example("tiny-trn1.json") + "' --csv '" + csv.string() + "'");
  const auto r2 = run("run '" + example("tiny-trn1.json") + "' --set parallelism.tp=1 --set parallelism.dp=2 --csv '" +
                      csv.string() + "'");
  REQUIRE(r1.code == 0);
  REQUIRE(r2.code == 0);
  std::istringstream in(slurp(csv));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  fs::remove(csv);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == trnsim::report::csv_header());
  // Columns 7-9 are tp, pp, dp: TP 2 x DP 1, then TP 1 x DP 2 on the same 2 cores.
  CHECK_THAT(lines[1], Catch::Contains(",1,1,2,1,1,"));  // instances, chips, tp, pp, dp
  CHECK_THAT(lines[2], Catch::Contains(",1,1,1,1,2,"));
}
