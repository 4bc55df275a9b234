// Validation rows and their statistics, on rows made by hand.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "trnsim/report/analysis/validation.hpp"
#include "trnsim/report/writers/validation_report.hpp"

using namespace trnsim::report;

namespace {

ValidationRow row(std::string id, std::string family, double predicted, double measured) {
  ValidationRow r;
  r.id = std::move(id);
  r.file = r.id + ".json";
  r.family = std::move(family);
  r.predicted_s = predicted;
  r.measured_s = measured;
  return r;
}

}  // namespace

TEST_CASE("validation: mean absolute and worst error, overall and per family") {
  // Errors: a +10 %, b -5 % (family X); c -20 % (family W, sorted first).
  const std::vector<ValidationRow> rows = {row("a", "X", 11, 10), row("b", "X", 9.5, 10), row("c", "W", 8, 10)};
  CHECK(rows[0].error() == Approx(0.10));
  CHECK(rows[1].error() == Approx(-0.05));
  const ValidationSummary s = summarize(rows);
  CHECK(s.all.files == 3);
  CHECK(s.all.mean_abs_error == Approx((0.10 + 0.05 + 0.20) / 3));
  CHECK(s.all.worst_error == Approx(-0.20));  // the largest magnitude, sign kept
  CHECK(s.all.worst_id == "c");
  REQUIRE(s.families.size() == 2);
  CHECK(s.families[0].family == "W");
  CHECK(s.families[0].files == 1);
  CHECK(s.families[0].mean_abs_error == Approx(0.20));
  CHECK(s.families[1].family == "X");
  CHECK(s.families[1].files == 2);
  CHECK(s.families[1].mean_abs_error == Approx(0.075));
  CHECK(s.families[1].worst_error == Approx(0.10));
  CHECK(s.families[1].worst_id == "a");
}

TEST_CASE("validation: no rows give zero counts") {
  const ValidationSummary s = summarize({});
  CHECK(s.all.files == 0);
  CHECK(s.all.mean_abs_error == 0);
  CHECK(s.families.empty());
}

TEST_CASE("validation: a row's implied MFU uses the measured step time") {
  StepReport rep;
  rep.chip = "Trainium";
  rep.step_time_s = 2;
  rep.model_flops = 1e15;
  rep.peak_flops = 1e15;  // FLOP/s: 1 s of peak per step
  rep.mfu = 0.5;
  rep.breakdown.seconds[static_cast<std::size_t>(Part::Backward)] = 1.5;
  rep.breakdown.seconds[static_cast<std::size_t>(Part::Forward)] = 0.5;
  const ValidationRow r = validation_row(rep, "x", "x.json", 4);
  CHECK(r.family == "Trainium");
  CHECK(r.mfu_predicted == 0.5);
  CHECK(r.mfu_measured == Approx(0.25));  // 1e15 / (4 s x 1e15)
  CHECK(r.error() == Approx(-0.5));
  CHECK(r.finding == "backward 75.0 % of the step");
  rep.findings.push_back({"out_of_memory", "stage 0 needs more", 0, ""});
  CHECK(validation_row(rep, "x", "x.json", 4).finding == "[out_of_memory] stage 0 needs more");
}

TEST_CASE("validation: CSV has a header and one line per row, quoting fields with commas") {
  std::vector<ValidationRow> rows = {row("a", "X", 11, 10)};
  rows[0].finding = "forward, mostly";
  const std::string csv = format_validation_csv(rows);
  CHECK(csv ==
        "id,file,family,predicted_step_time_s,measured_step_time_s,error_pct,mfu_predicted_pct,mfu_measured_pct,"
        "main_finding\n"
        "a,a.json,X,11.000000,10.000000,10.000,0.000,0.000,\"forward, mostly\"\n");
}
