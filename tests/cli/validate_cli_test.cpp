// trnsim validate, run as a user runs it: the unset-field rule and the band do not depend on the
// files' order, the band's columns place the measurement, bad measurements are errors naming the
// file, thresholds decide the exit code, marks flag out-of-memory plans and generic precision recipes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
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

// ' PATH ' with a space before, for a command line. (Appending, not a chain of operator+: GCC 12
// sees a false overlap in "'" + s + "'" at -O3.)
std::string quoted(const fs::path& p) {
  std::string out = " '";
  out += p.string();
  out += "'";
  return out;
}

// The fields of the CSV line whose first field is `id`, split at every comma (only the last field,
// the quoted main finding, can hold one).
std::vector<std::string> csv_row(const std::string& csv, const std::string& id) {
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(id + ",", 0) != 0) continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    return fields;
  }
  return {};
}

// The lines of `text`, sorted: the same rows and summary whatever their order.
std::vector<std::string> sorted_lines(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
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

TEST_CASE("validate: the rule and the band are the same whatever the order of the files") {
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
  // Deterministic: the same command prints the same bytes; the other order the same lines.
  CHECK(run(ab + " --explain tiny-tp").out == run(ab + " --explain tiny-tp").out);
  CHECK(sorted_lines(run(ab).out) == sorted_lines(run(ba).out));
  fs::remove(a);
  fs::remove(b);
}

TEST_CASE("validate: the band's columns say whether the measurement lies inside it") {
  // First the band of the tiny file (null micro_batch, recompute, zero; tp 1, dp 2: micro-batch
  // 1, 2, 4 x 3 recompute x 2 zero = 18 candidates) from its CSV row.
  const fs::path probe = write_json(tiny_experiment("tiny", 1, 1.0), "probe.json");
  const fs::path csv = scratch("band.csv");
  REQUIRE(run("validate '" + probe.string() + "' --csv '" + csv.string() + "'").code == 0);
  const auto fields = csv_row(slurp(csv), "tiny");
  REQUIRE(fields.size() >= 12);  // the last, main_finding, is quoted and may hold commas
  const double predicted = std::stod(fields[3]), fastest = std::stod(fields[5]), slowest = std::stod(fields[6]);
  REQUIRE(fastest < slowest);  // recomputation and micro-batch size change the step
  CHECK(fastest <= predicted);
  CHECK(predicted <= slowest);

  // Measurements below, inside (the middle) and above that band.
  const fs::path below = write_json(tiny_experiment("tiny-below", 1, fastest / 2), "below.json");
  const fs::path inside = write_json(tiny_experiment("tiny-in", 1, (fastest + slowest) / 2), "in.json");
  const fs::path above = write_json(tiny_experiment("tiny-above", 1, slowest * 2), "above.json");
  // Every field set (tp 1 keeps SP off, dp 2 takes zero 0): one plan, the prediction.
  auto set = tiny_experiment("tiny-set", 1, 1.0);
  set["training"]["micro_batch"] = 1;
  set["parallelism"] = {{"tp", 1}, {"pp", 1}, {"dp", 2}, {"sequence_parallel", false}, {"zero", 0},
                        {"schedule", "1f1b"}, {"virtual_stages", 1}, {"recompute", "full"}};
  const fs::path full = write_json(set, "set.json");
  std::string files;
  for (const fs::path& p : {below, inside, above, full}) files += quoted(p);
  const auto r = run("validate" + files + " --csv" + quoted(csv) + " --explain tiny-in");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("measured(s)  fastest(s)  slowest(s)  band "));
  CHECK_THAT(row_of(r.out, "tiny-below"), Catch::Contains(" below "));
  CHECK_THAT(row_of(r.out, "tiny-in"), Catch::Contains(" in "));
  CHECK_THAT(row_of(r.out, "tiny-above"), Catch::Contains(" above "));
  CHECK_THAT(r.out, Catch::Contains("measured against band: 1 in, 1 below, 2 above"));  // tiny-set: 1 s, above
  CHECK_THAT(r.out, Catch::Contains("band       18 candidates over the null fields, 18 fit in memory"));
  CHECK_THAT(r.out, Catch::Contains("measured in the band"));
  const std::string rows = slurp(csv);
  CHECK(csv_row(rows, "tiny-below")[7] == "below");
  CHECK(csv_row(rows, "tiny-in")[7] == "in");
  CHECK(csv_row(rows, "tiny-above")[7] == "above");
  // The same band for every file with the same null fields, whatever its measurement.
  CHECK(std::stod(csv_row(rows, "tiny-above")[5]) == fastest);
  CHECK(std::stod(csv_row(rows, "tiny-above")[6]) == slowest);
  const auto one = csv_row(rows, "tiny-set");
  CHECK(one[5] == one[3]);  // fastest = predicted
  CHECK(one[6] == one[3]);  // slowest = predicted
  for (const fs::path& p : {probe, csv, below, inside, above, full}) fs::remove(p);
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

TEST_CASE("validate: marks a row estimated out of memory and a row run with the generic precision recipe") {
  // Three rows of the tiny file, every field set (the prediction's plan is the file's): as it is;
  // with 0.02 GiB of HBM per chip, 0.01 GiB per rank (trn1.2xlarge: one chip, two NeuronCores,
  // one rank each), below the ~0.02 GiB the plan needs (mostly fp32 optimizer states); and with
  // dtype fp8, for which neuronx-distributed (bf16 only) has no recipe.
  const std::string tiny = "run '" + example("tiny-trn1.json") + "' --dry-run";
  const auto plain = run(tiny);
  const auto small = run(tiny + " --set cluster.chip.hbm_GiB=0.02");
  const auto fp8 = run(tiny + " --set training.dtype=fp8");
  REQUIRE(plain.code == 0);
  REQUIRE(small.code == 0);
  REQUIRE(fp8.code == 0);
  const auto with_measurement = [](const std::string& resolved, const std::string& id) {
    auto j = nlohmann::json::parse(resolved);
    j["id"] = id;
    j["measured"] = {{"step_time_s", 0.01}};
    return write_json(j, id + ".json");
  };
  const fs::path a = with_measurement(plain.out, "tiny-fits"), b = with_measurement(small.out, "tiny-oom"),
                 c = with_measurement(fp8.out, "tiny-fp8");
  // The need the memory model states for the small row, as `run` reports it.
  const fs::path report = scratch("oom.json");
  REQUIRE(run("run" + quoted(b) + " --json" + quoted(report)).code == 0);
  const auto stage = nlohmann::json::parse(slurp(report))["memory"][0];
  const double need_GiB = stage["total_bytes"].get<double>() / 1073741824.0;
  REQUIRE(need_GiB > 0.01);

  const fs::path csv = scratch("marks.csv");
  const auto r = run("validate" + quoted(a) + quoted(b) + quoted(c) + " --csv" + quoted(csv));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("  marks  "));
  CHECK_THAT(row_of(r.out, "tiny-fits"), Catch::Contains("  -  "));
  CHECK_THAT(row_of(r.out, "tiny-oom"), Catch::Contains(fmt::format("OOM est. {:.3g} of 0.01 GiB", need_GiB)));
  CHECK_THAT(row_of(r.out, "tiny-oom"), !Catch::Contains("generic"));
  CHECK_THAT(row_of(r.out, "tiny-fp8"), Catch::Contains("generic fp8 recipe"));
  CHECK_THAT(row_of(r.out, "tiny-fp8"), !Catch::Contains("OOM"));
  // CSV: oom_estimate_GiB, oom_capacity_GiB, generic_recipe_dtype before the main finding.
  const std::string rows = slurp(csv);
  CHECK_THAT(rows, Catch::StartsWith("id,file,family,predicted_step_time_s,measured_step_time_s,band_fastest_s,"
                                     "band_slowest_s,band,error_pct,mfu_predicted_pct,mfu_measured_pct,"
                                     "oom_estimate_GiB,oom_capacity_GiB,generic_recipe_dtype,main_finding,"
                                     "calibration_family,in_calibration_record\n"));
  const auto fits = csv_row(rows, "tiny-fits"), oom = csv_row(rows, "tiny-oom"), gen = csv_row(rows, "tiny-fp8");
  REQUIRE(oom.size() >= 15);
  CHECK(fits[11].empty());
  CHECK(fits[12].empty());
  CHECK(fits[13].empty());
  CHECK(std::stod(oom[11]) == Approx(need_GiB).margin(5e-7));  // printed to 6 decimals
  CHECK(oom[12] == "0.010000");
  CHECK(oom[13].empty());
  CHECK(gen[11].empty());
  CHECK(gen[13] == "fp8");
  for (const fs::path& p : {a, b, c, report, csv}) fs::remove(p);
}
