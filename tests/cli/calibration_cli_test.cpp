// The calibration record at run time, as a user meets it: run and validate state each prediction's
// family and its error; a record they cannot read is an error naming the file and the JSON path
// (exit 2); without one run says so.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

// A copy of the source tree's configs/ whose calibration record is `record` ("" for none).
fs::path config_copy(const std::string& record) {
  const fs::path dir = scratch("configs");
  fs::copy(fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs", dir, fs::copy_options::recursive);
  fs::remove(dir / "calibration" / "families.json");
  if (!record.empty()) std::ofstream(dir / "calibration" / "families.json") << record;
  return dir;
}

// trnsim ARGS with TRNSIM_CONFIG_DIR at `dir` (the child inherits the variable).
Result run_with(const fs::path& dir, const std::string& args) {
  ::setenv("TRNSIM_CONFIG_DIR", dir.c_str(), 1);
  Result r = run(args);
  ::unsetenv("TRNSIM_CONFIG_DIR");
  return r;
}

}  // namespace

TEST_CASE("calibration cli: a malformed record is refused with the file and the JSON path, exit 2") {
  const fs::path dir = config_copy(R"({"families": [{"family": "x", "rows": "one"}]})");
  const std::string file = (dir / "calibration" / "families.json").string();
  for (const std::string& cmd : {"run '" + example("tiny-trn1.json") + "'",
                                "validate '" + std::string(TRNSIM_TEST_SOURCE_DIR) +
                                    "/configs/validation/neuron-trn1-bert-large-1node.json'"}) {
    INFO(cmd);
    const Result r = run_with(dir, cmd);
    CHECK(r.code == 2);
    CHECK(r.err == "error: " + file + ": /families/0/rows: expected an integer >= 1, found \"one\"\n");
  }
  fs::remove_all(dir);
}

TEST_CASE("calibration cli: without a record, run says so") {
  const fs::path dir = config_copy("");
  const Result r = run_with(dir, "run '" + example("tiny-trn1.json") + "'");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("error bar  Trainium x neuronx-distributed@2.19: no calibration record"));
  fs::remove_all(dir);
}

TEST_CASE("calibration cli: validate prints the family's figures from the record and the cross-family error") {
  const Result r = run("validate '" + std::string(TRNSIM_TEST_SOURCE_DIR) +
                       "/configs/validation/neuron-trn1-bert-large-1node.json'");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("families (chip x software@release)"));
  CHECK_THAT(r.out, Catch::Contains("  Trainium x neuron-pytorch-dp@2.19  1 file: mean |error| "));
  CHECK_THAT(r.out, Catch::Contains("; leave-one-out "));
  CHECK_THAT(r.out, Catch::Contains("cross-family error (the record's leave-one-family-out predictions)"));
}
