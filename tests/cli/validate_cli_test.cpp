// trnsim validate, run as a user runs it: the unset-field rule does not depend on the files'
// order, bad measurements are errors naming the file, thresholds decide the exit code.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

// The tiny example with the fields a validation file often leaves null, and a measurement.
nlohmann::json tiny_experiment(const std::string& id, std::int64_t tp, double measured_s) {
  auto j = nlohmann::json::parse(slurp(example("tiny-trn1.json")));
  j["id"] = id;
  j["training"]["micro_batch"] = nullptr;
  j["parallelism"] = {{"tp", tp}, {"pp", 1}, {"dp", 2 / tp}, {"sequence_parallel", nullptr}, {"zero", nullptr},
                      {"schedule", nullptr}, {"virtual_stages", nullptr}, {"recompute", nullptr}};
  j["measured"] = {{"step_time_s", measured_s}};
  return j;
}

fs::path write_json(const nlohmann::json& j, const std::string& name) {
  const fs::path p = scratch(name);
  std::ofstream(p) << j.dump(2);
  return p;
}

// The stdout line of the validation table that starts with `id`.
std::string row_of(const std::string& out, const std::string& id) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(id + " ", 0) == 0) return line;
  return "";
}

// The "plan" and "unset fields chosen" lines of an --explain report.
std::string plan_lines(const std::string& out) {
  std::istringstream in(out);
  std::string kept;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("plan ", 0) == 0 || line.rfind("  /", 0) == 0) kept += line + "\n";
  return kept;
}

}  // namespace

TEST_CASE("validate: the rule picks the same plan whatever the order of the files") {
  const fs::path a = write_json(tiny_experiment("tiny-dp", 1, 0.01), "a.json");
  const fs::path b = write_json(tiny_experiment("tiny-tp", 2, 0.01), "b.json");
  const std::string ab = "validate '" + a.string() + "' '" + b.string() + "'";
  const std::string ba = "validate '" + b.string() + "' '" + a.string() + "'";
  for (const std::string id : {"tiny-dp", "tiny-tp"}) {
    INFO(id);
    const auto first = run(ab + " --explain " + id);
    const auto second = run(ba + " --explain " + id);
    REQUIRE(first.code == 0);
    REQUIRE(second.code == 0);
    CHECK(!row_of(first.out, id).empty());
    CHECK(row_of(first.out, id) == row_of(second.out, id));
    CHECK_THAT(plan_lines(first.out), Catch::Contains("(rule: software neuronx-distributed default)"));
    CHECK(plan_lines(first.out) == plan_lines(second.out));
  }
  // Deterministic: the same command prints the same bytes.
  CHECK(run(ab + " --explain tiny-tp").out == run(ab + " --explain tiny-tp").out);
  fs::remove(a);
  fs::remove(b);
}

TEST_CASE("validate: a missing or malformed measurement is an error naming the file (exit 2)") {
  auto j = tiny_experiment("bad", 1, 0.01);
  SECTION("no measured block") { j.erase("measured"); }
  SECTION("measured is null") { j["measured"] = nullptr; }
  SECTION("step time missing") { j["measured"] = {{"published", "95 seq/s"}}; }
  SECTION("step time not a number") { j["measured"]["step_time_s"] = "fast"; }
  SECTION("step time zero") { j["measured"]["step_time_s"] = 0; }
  SECTION("step time negative") { j["measured"]["step_time_s"] = -1.5; }
  const fs::path p = write_json(j, "bad.json");
  const fs::path good = write_json(tiny_experiment("good", 1, 0.01), "good.json");
  const auto r = run("validate '" + good.string() + "' '" + p.string() + "'");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(p.string()));
  CHECK_THAT(r.err, Catch::Contains("/measured"));
  CHECK(r.out.empty());  // checked before anything is simulated
  fs::remove(p);
  fs::remove(good);
}

TEST_CASE("validate: thresholds exit 1 when exceeded, CSV has one row per file") {
  const fs::path a = write_json(tiny_experiment("tiny-dp", 1, 1e-6), "a.json");
  const fs::path csv = scratch("rows.csv");
  // A 1 us measurement is far below any simulated step: the error is huge.
  const auto over = run("validate '" + a.string() + "' --max-worst-error 50 --csv '" + csv.string() + "'");
  CHECK(over.code == 1);
  CHECK_THAT(over.out, Catch::Contains("exceeds --max-worst-error"));
  const std::string rows = slurp(csv);
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 2);  // header + one row
  CHECK_THAT(rows, Catch::StartsWith("id,file,family,"));
  const auto mean = run("validate '" + a.string() + "' --max-mean-error 50");
  CHECK(mean.code == 1);
  const auto loose = run("validate '" + a.string() + "' --max-mean-error 1e12 --max-worst-error 1e12");
  CHECK(loose.code == 0);
  CHECK(run("validate '" + a.string() + "' --explain nosuchid").code == 2);
  CHECK(run("validate /nonexistent/dir").code == 2);
  fs::remove(a);
  fs::remove(csv);
}
