// Two JSON reports compared (report/analysis/compare.hpp), on reports written by hand: only the
// fields `trnsim compare` reads, with round numbers whose changes are worked out in comments.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/error.hpp"
#include "trnsim/report/analysis/compare.hpp"
#include "trnsim/report/writers/compare_table.hpp"

using namespace trnsim::report;
using nlohmann::json;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kVersion = 7;  // any version: compare_reports checks the one it is given

// A report of `step` seconds split forward 3/4, backward 1/4; 1,000 tokens/s; MFU 0.4; two stages
// of 3 and 5 GiB per rank.
json sample_report(double step) {
  return {{"schema_version", kVersion},
          {"results", {{"step_time_s", step}, {"tokens_per_s", 1000.0}, {"mfu", 0.4}}},
          {"breakdown", {{"seconds", {{"forward", 0.75 * step}, {"backward", 0.25 * step}}}}},
          {"memory", json::array({{{"total_bytes", 3 * kGiB}}, {{"total_bytes", 5 * kGiB}}})}};
}

std::vector<CompareRow> compare(const json& result, const json& baseline, double tolerance = 0.02,
                                std::map<std::string, double, std::less<>> per_metric = {}) {
  CompareOptions o;
  o.schema_version = kVersion;
  o.tolerance = tolerance;
  o.tolerance_for = std::move(per_metric);
  return compare_reports({result, "result.json"}, {baseline, "baseline.json"}, o);
}

const CompareRow& row(const std::vector<CompareRow>& rows, const std::string& metric) {
  for (const auto& r : rows)
    if (r.metric == metric) return r;
  FAIL("no row " << metric);
  return rows.front();
}

std::string error_of(const json& result, const json& baseline, std::map<std::string, double, std::less<>> per = {}) {
  try {
    compare(result, baseline, 0.02, std::move(per));
  } catch (const trnsim::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("compare: a 5 % slower step fails a 2 % tolerance, a 1 % slower one passes") {
  // 10 s -> 10.5 s: +5 % > 2 %; 10 s -> 10.1 s: +1 % <= 2 %. The parts scale with the step, so
  // forward (7.5 -> 7.875 s) and backward (2.5 -> 2.625 s) move by the same +5 % and +1 %.
  const auto slow = compare(sample_report(10.5), sample_report(10));
  CHECK(row(slow, "step_time").change == Approx(0.05));
  CHECK(row(slow, "step_time").status == CompareStatus::Regressed);
  CHECK(row(slow, "breakdown.forward").status == CompareStatus::Regressed);
  CHECK(row(slow, "throughput").status == CompareStatus::Within);  // 1,000 tokens/s in both
  CHECK(any_regression(slow));
  const auto near = compare(sample_report(10.1), sample_report(10));
  CHECK(row(near, "step_time").change == Approx(0.01));
  CHECK(row(near, "step_time").status == CompareStatus::Within);
  CHECK_FALSE(any_regression(near));
}

TEST_CASE("compare: an improvement past the tolerance is reported, not a failure") {
  // 10 s -> 9.5 s: -5 %, past 2 % in the good direction.
  const auto rows = compare(sample_report(9.5), sample_report(10));
  CHECK(row(rows, "step_time").change == Approx(-0.05));
  CHECK(row(rows, "step_time").status == CompareStatus::Improved);
  CHECK_FALSE(any_regression(rows));
}

TEST_CASE("compare: throughput and MFU regress downwards, peak memory upwards") {
  json base = sample_report(10), res = sample_report(10);
  res["results"]["tokens_per_s"] = 950.0;                  // -5 %: fewer tokens is worse
  res["results"]["mfu"] = 0.41;                            // +2.5 %: higher MFU is better
  res["memory"][1]["total_bytes"] = 5.5 * kGiB;            // peak 5 -> 5.5 GiB: +10 %
  res["memory"][0]["total_bytes"] = 2 * kGiB;              // not the peak: does not count
  const auto rows = compare(res, base);
  CHECK(row(rows, "throughput").status == CompareStatus::Regressed);
  CHECK(row(rows, "mfu").status == CompareStatus::Improved);
  CHECK(row(rows, "peak_memory").baseline == 5.0);
  CHECK(row(rows, "peak_memory").result == 5.5);
  CHECK(row(rows, "peak_memory").change == Approx(0.10));
  CHECK(row(rows, "peak_memory").status == CompareStatus::Regressed);
}

TEST_CASE("compare: a change equal to the tolerance passes, and tolerance 0 fails any worsening") {
  // 8 s -> 8.5 s is +6.25 %, exactly representable, as is 6.25 % / 100 = 0.0625.
  CHECK(row(compare(sample_report(8.5), sample_report(8), parse_percent("6.25%", "t")), "step_time").status == CompareStatus::Within);
  CHECK(row(compare(sample_report(8.5), sample_report(8), 0.06), "step_time").status == CompareStatus::Regressed);
  CHECK_FALSE(any_regression(compare(sample_report(8), sample_report(8), 0)));
  CHECK(any_regression(compare(sample_report(std::nextafter(8.0, 9.0)), sample_report(8), 0)));
}

TEST_CASE("compare: --tolerance-for sets one metric's tolerance, leaving the others at the default") {
  // 10 -> 10.5 s: +5 % everywhere time is measured. step_time at 10 % passes; the parts keep 2 %.
  const auto rows = compare(sample_report(10.5), sample_report(10), 0.02, {{"step_time", 0.10}});
  CHECK(row(rows, "step_time").tolerance == 0.10);
  CHECK(row(rows, "step_time").status == CompareStatus::Within);
  CHECK(row(rows, "breakdown.backward").tolerance == 0.02);
  CHECK(row(rows, "breakdown.backward").status == CompareStatus::Regressed);
  // And the other way: a default of 10 % with step_time held to 1 %.
  const auto strict = compare(sample_report(10.5), sample_report(10), 0.10, {{"step_time", 0.01}});
  CHECK(row(strict, "step_time").status == CompareStatus::Regressed);
  CHECK(row(strict, "breakdown.forward").status == CompareStatus::Within);
}

TEST_CASE("compare: --metric keeps only the named rows, so another metric's regression does not count") {
  // Step time unchanged (10 s); throughput 1,000 -> 900 tokens/s, -10 %: a regression, unless
  // only step_time is asked for.
  json res = sample_report(10);
  res["results"]["tokens_per_s"] = 900.0;
  CHECK(any_regression(compare(res, sample_report(10))));
  CompareOptions o;
  o.schema_version = kVersion;
  o.only = {"step_time"};
  const auto rows = compare_reports({res, "r"}, {sample_report(10), "b"}, o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].metric == "step_time");
  CHECK_FALSE(any_regression(rows));
  o.only = {"step-time"};
  CHECK_THROWS_WITH(compare_reports({res, "r"}, {sample_report(10), "b"}, o),
                    Catch::StartsWith("--metric step-time: unknown metric"));
}

TEST_CASE("compare: a breakdown part absent from one report counts as 0 s there") {
  json base = sample_report(10), res = sample_report(10);
  res["breakdown"]["seconds"]["novel_wait"] = 0.5;  // only in the result: 0 -> 0.5 s
  base["breakdown"]["seconds"]["novel_gone"] = 1.0;  // only in the baseline: 1 -> 0 s, -100 %
  const auto rows = compare(res, base);
  const auto& added = row(rows, "breakdown.novel_wait");
  CHECK(added.absent_in_baseline);
  CHECK(std::isinf(added.change));
  CHECK(added.status == CompareStatus::Regressed);
  const auto& gone = row(rows, "breakdown.novel_gone");
  CHECK(gone.absent_in_result);
  CHECK(gone.change == -1.0);
  CHECK(gone.status == CompareStatus::Improved);
  // A part this build names but neither report holds: 0 s in both, no change.
  CHECK(row(rows, "breakdown.pipeline_bubble").change == 0.0);
  CHECK(row(rows, "breakdown.pipeline_bubble").status == CompareStatus::Within);
  // Rows: 4 headline metrics, this build's 8 parts, then the two extra ones by name.
  REQUIRE(rows.size() == 4 + 8 + 2);
  CHECK(rows[12].metric == "breakdown.novel_gone");
  CHECK(rows[13].metric == "breakdown.novel_wait");
  // Either report's extra part is a metric --tolerance-for may name.
  CHECK(error_of(res, base, {{"breakdown.novel_wait", 0.5}}) == "(no error)");
}

TEST_CASE("compare: bad input names the file, the JSON path, what was expected and what was found") {
  json old = sample_report(10);
  old["schema_version"] = 1;
  CHECK(error_of(sample_report(10), old) ==
        "baseline.json: /schema_version: expected schema_version 7, found 1 (regenerate the report with this trnsim)");
  json missing = sample_report(10);
  missing["results"].erase("step_time_s");
  CHECK(error_of(missing, sample_report(10)) == "result.json: /results/step_time_s: missing (expected a number)");
  json text = sample_report(10);
  text["memory"][1]["total_bytes"] = "5 GiB";
  CHECK(error_of(text, sample_report(10)) == "result.json: /memory/1/total_bytes: expected a number, found \"5 GiB\"");
  CHECK(error_of(json::array(), sample_report(10)) ==
        "result.json: expected a `trnsim run --json` report (a JSON object), found array");
  // A zero step time would make any change infinite, or hide one where both are zero.
  CHECK(error_of(sample_report(0), sample_report(0)) ==
        "baseline.json: /results/step_time_s: expected a finite number > 0, found 0.0");
  json sweep_file = sample_report(10);
  sweep_file["kind"] = "trnsim-sweep";
  CHECK(error_of(sweep_file, sample_report(10)) ==
        "result.json: /kind: expected a `trnsim run --json` report, found a \"trnsim-sweep\" file");
  CHECK_THAT(error_of(sample_report(10), sample_report(10), {{"step-time", 0.01}}),
             Catch::StartsWith("--tolerance-for step-time: unknown metric (expected one of step_time, throughput"));
}

TEST_CASE("compare: percentages are 2%, 2 or 0.5%, never negative or malformed") {
  CHECK(parse_percent("2%", "--tolerance") == 0.02);
  CHECK(parse_percent("2", "--tolerance") == 0.02);
  CHECK(parse_percent("0.5%", "--tolerance") == 0.005);
  CHECK(parse_percent("0", "--tolerance") == 0.0);
  for (const char* bad : {"", "%", "-1%", "-0.5", "abc", "2%%", "2 %", "nan", "inf", "1e999"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_percent(bad, "--tolerance"), trnsim::InputError);
  }
  CHECK_THROWS_WITH(parse_percent("-1%", "--tolerance"), "--tolerance: expected a percentage >= 0, found \"-1%\"");
  const auto [metric, pct] = parse_metric_tolerance("breakdown.forward=0.5%");
  CHECK(metric == "breakdown.forward");
  CHECK(pct == 0.005);
  CHECK_THROWS_AS(parse_metric_tolerance("step_time"), trnsim::InputError);
  CHECK_THROWS_AS(parse_metric_tolerance("=2%"), trnsim::InputError);
  CHECK_THROWS_AS(parse_metric_tolerance("step_time=x"), trnsim::InputError);
}

TEST_CASE("compare: the table marks each row and ends with the verdict") {
  const std::string failing = format_compare_table(compare(sample_report(10.5), sample_report(10)), "r.json", "b.json");
  CHECK_THAT(failing, Catch::Contains("result    r.json\nbaseline  b.json\n"));
  CHECK_THAT(failing, Catch::Contains("REGRESSED"));
  // step_time, breakdown.forward and breakdown.backward all moved +5 %.
  CHECK_THAT(failing, Catch::Contains("FAIL: 3 metrics regressed past their tolerance: step_time, breakdown.forward, "
                                      "breakdown.backward\n"));
  const std::string passing = format_compare_table(compare(sample_report(9.5), sample_report(10)), "r.json", "b.json");
  CHECK_THAT(passing, Catch::Contains("improved"));
  CHECK_THAT(passing, Catch::Contains("OK: no metric regressed past its tolerance (3 improved past it)\n"));
}

TEST_CASE("compare: a change of exactly the tolerance passes despite rounding, and a negative figure is bad input") {
  // 1 s -> 1.02 s is +2 %, but in doubles (1.02 - 1) / 1 = 0.020000000000000018, an ulp above 0.02.
  const auto edge = compare(sample_report(1.02), sample_report(1.0));
  CHECK(row(edge, "step_time").change > 0.02);
  CHECK(row(edge, "step_time").status == CompareStatus::Within);
  // 1 s -> 1.021 s (+2.1 %) is past it.
  CHECK(row(compare(sample_report(1.021), sample_report(1.0)), "step_time").status == CompareStatus::Regressed);
  // A negative step time would turn a slower run into an "improvement" (only the step time is
  // negative here: the breakdown's parts, checked too, stay those of a 1 s step).
  json negative = sample_report(1.0);
  negative["results"]["step_time_s"] = -1.0;
  CHECK_THAT(error_of(sample_report(1.0), negative), Catch::Contains("baseline.json: /results/step_time_s: expected a finite number > 0, found -1.0"));
}
