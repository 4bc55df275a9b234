// trnsim compare, run as a user runs it: exit codes 1 (regression), 0 (within tolerance or
// better), 2 (bad input, named). The reports are a real one (the committed golden report of
// tiny-trn1, a `trnsim run --json` report) with its step time edited to round numbers.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"
#include "trnsim/report/writers/json_report.hpp"

using namespace trnsim::test;

namespace {

nlohmann::json real_report() {
  return nlohmann::json::parse(slurp(fs::path(TRNSIM_TEST_SOURCE_DIR) / "tests" / "golden" / "tiny-trn1.json"));
}

// The real report with its step time set to `step` seconds, written to a scratch file.
struct ReportFile {
  fs::path path;
  explicit ReportFile(const nlohmann::json& doc) : path(scratch("report.json")) { std::ofstream(path) << doc.dump(2); }
  ReportFile(const ReportFile&) = delete;
  ReportFile& operator=(const ReportFile&) = delete;
  ~ReportFile() { fs::remove(path); }
  // Built with += : GCC 12 at -O3 warns falsely (-Wrestrict) on "'" + path.string().
  std::string arg() const {
    std::string quoted = "'";
    quoted += path.string();
    quoted += "'";
    return quoted;
  }
};

nlohmann::json with_step(double step) {
  auto j = real_report();
  j["results"]["step_time_s"] = step;
  return j;
}

}  // namespace

TEST_CASE("cli: compare exits 1 on a 5 % slower step with a 2 % tolerance and 0 on a 1 % slower one") {
  // Baseline 10 s; results 10.5 s (+5 % > 2 %) and 10.1 s (+1 % <= 2 %). Nothing else differs.
  const ReportFile base(with_step(10)), slow(with_step(10.5)), near(with_step(10.1));
  const auto r = run("compare " + slow.arg() + " " + base.arg() + " --tolerance 2%");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("FAIL: 1 metric regressed past its tolerance: step_time\n"));
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*step_time \\(s\\) +10 +10\\.5 +\\+5 +2 +REGRESSED\n[\\s\\S]*"));
  const auto ok = run("compare " + near.arg() + " " + base.arg() + " --tolerance 2%");
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Catch::Matches("[\\s\\S]*step_time \\(s\\) +10 +10\\.1 +\\+1 +2 +ok\n[\\s\\S]*"));
  CHECK_THAT(ok.out, Catch::Contains("OK: no metric regressed past its tolerance (0 improved past it)\n"));
  // The default tolerance is 2 %.
  CHECK(run("compare " + slow.arg() + " " + base.arg()).code == 1);
  CHECK(run("compare " + near.arg() + " " + base.arg()).code == 0);
}

TEST_CASE("cli: compare exits 0 on an improvement past the tolerance and says so") {
  // 10 s -> 9 s: -10 %, past 2 % in the good direction.
  const ReportFile base(with_step(10)), fast(with_step(9));
  const auto r = run("compare " + fast.arg() + " " + base.arg() + " --tolerance 2");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Matches("[\\s\\S]*step_time \\(s\\) +10 +9 +-10 +2 +improved\n[\\s\\S]*"));
  CHECK_THAT(r.out, Catch::Contains("(1 improved past it)"));
}

TEST_CASE("cli: compare --tolerance-for overrides the tolerance of one metric") {
  // +5 % on step_time: allowed at 6 %, refused at 4 % even under a default of 10 %.
  const ReportFile base(with_step(10)), slow(with_step(10.5));
  CHECK(run("compare " + slow.arg() + " " + base.arg() + " --tolerance-for step_time=6%").code == 0);
  CHECK(run("compare " + slow.arg() + " " + base.arg() + " --tolerance 10% --tolerance-for step_time=4%").code == 1);
  // Another metric's override leaves step_time at the default 2 %.
  CHECK(run("compare " + slow.arg() + " " + base.arg() + " --tolerance-for mfu=50%").code == 1);
  // --metric leaves the other rows out: only MFU (unchanged) is compared, so the slower step passes.
  const auto only = run("compare " + slow.arg() + " " + base.arg() + " --metric mfu");
  CHECK(only.code == 0);
  CHECK_THAT(only.out, !Catch::Contains("step_time (s)"));
  CHECK_THAT(only.out, Catch::Contains("\nmfu "));
}

TEST_CASE("cli: compare refuses a report of another schema version, naming it") {
  auto old = with_step(10);
  old["schema_version"] = trnsim::report::kReportSchemaVersion + 1;
  const ReportFile base(old), res(with_step(10));
  const auto r = run("compare " + res.arg() + " " + base.arg());
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(base.path.string() + ": /schema_version: expected schema_version " +
                                    std::to_string(trnsim::report::kReportSchemaVersion) + ", found " +
                                    std::to_string(trnsim::report::kReportSchemaVersion + 1)));
  CHECK(r.out.empty());
}

TEST_CASE("cli: compare exits 2 on bad input, naming the file, the JSON path or the option") {
  const ReportFile good(with_step(10));
  auto no_step = with_step(10);
  no_step["results"].erase("step_time_s");
  const ReportFile missing(no_step);
  const fs::path text = scratch("not.json");
  std::ofstream(text) << "step time 10 s\n";
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"compare " + missing.arg() + " " + good.arg(), missing.path.string() + ": /results/step_time_s: missing"},
      {"compare '" + text.string() + "' " + good.arg(), text.string() + ": invalid JSON"},
      {"compare /nonexistent/r.json " + good.arg(), "/nonexistent/r.json: cannot open file"},
      {"compare " + good.arg() + " " + good.arg() + " --tolerance-for step=1%", "--tolerance-for step: unknown metric"},
      {"compare " + good.arg() + " " + good.arg() + " --tolerance=-2%", "--tolerance: expected a percentage >= 0"},
      {"compare " + good.arg() + " " + good.arg() + " --tolerance 2pc", "--tolerance: expected a percentage"},
      {"compare " + good.arg() + " " + good.arg() + " --tolerance-for step_time", "expected METRIC=PCT"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = run(c.args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
  fs::remove(text);
}

TEST_CASE("cli: compare --help names the metrics and the exit codes") {
  const auto r = run("compare --help");
  CHECK(r.code == 0);
  for (const char* metric : {"step_time", "throughput", "mfu", "peak_memory", "breakdown.forward", "breakdown.pipeline_bubble"}) {
    CHECK_THAT(r.out, Catch::Contains(metric));
  }
  CHECK_THAT(r.out, Catch::Contains("improvement past the tolerance is reported and exits 0"));
}
