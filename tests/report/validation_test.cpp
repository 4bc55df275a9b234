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

ValidationRow with_band(ValidationRow r, double fastest, double slowest) {
  r.has_band = true;
  r.band_fastest_s = fastest;
  r.band_slowest_s = slowest;
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
  trnsim::replay::PlanBand band;  // none replayed: no band
  const ValidationRow r = validation_row(rep, "x", "x.json", 4, band);
  CHECK(r.family == "Trainium");
  CHECK(r.mfu_predicted == 0.5);
  CHECK(r.mfu_measured == Approx(0.25));  // 1e15 / (4 s x 1e15)
  CHECK(r.error() == Approx(-0.5));
  CHECK(r.finding == "backward 75.0 % of the step");
  rep.findings.push_back({"out_of_memory", "stage 0 needs more", 0, ""});
  CHECK(validation_row(rep, "x", "x.json", 4, band).finding == "[out_of_memory] stage 0 needs more");
  CHECK(!r.has_band);
  CHECK(r.band_position() == "-");
  band.candidates = 6;
  band.fit = 4;
  band.simulated = 4;
  band.fastest_s = 3;
  band.slowest_s = 5;
  const ValidationRow b = validation_row(rep, "x", "x.json", 4, band);
  CHECK(b.has_band);
  CHECK(b.band_fastest_s == 3);
  CHECK(b.band_slowest_s == 5);
  CHECK(b.band_candidates == 6);
  CHECK(b.band_fit == 4);
  CHECK(b.band_position() == "in");
}

TEST_CASE("validation: the measurement against the band, bounds included, and the counts per family") {
  // Bands [9, 12]: measured 9 and 12 lie in (the bounds count), 8.5 below, 13 above; a row
  // without a band is counted nowhere.
  std::vector<ValidationRow> rows = {with_band(row("a", "X", 11, 9), 9, 12), with_band(row("b", "X", 11, 12), 9, 12),
                                     with_band(row("c", "X", 11, 8.5), 9, 12), with_band(row("d", "W", 11, 13), 9, 12),
                                     row("e", "W", 11, 10)};
  CHECK(rows[0].band_position() == "in");
  CHECK(rows[1].band_position() == "in");
  CHECK(rows[2].band_position() == "below");
  CHECK(rows[3].band_position() == "above");
  CHECK(rows[4].band_position() == "-");
  const ValidationSummary s = summarize(rows);
  CHECK(s.all.in_band == 2);
  CHECK(s.all.below_band == 1);
  CHECK(s.all.above_band == 1);
  REQUIRE(s.families.size() == 2);
  CHECK(s.families[0].family == "W");
  CHECK(s.families[0].in_band + s.families[0].below_band + s.families[0].above_band == 1);
  CHECK(s.families[0].above_band == 1);
  CHECK(s.families[1].in_band == 2);
  CHECK(s.families[1].below_band == 1);
  const std::string text = format_validation_text(rows, s);
  CHECK_THAT(text, Catch::Contains("fastest(s)  slowest(s)  band "));
  CHECK_THAT(text, Catch::Contains("measured against band: 2 in, 1 below, 1 above"));
  CHECK_THAT(text, Catch::Contains("9.000      12.000  below"));
}

TEST_CASE("validation: CSV has a header and one line per row, quoting fields with commas") {
  std::vector<ValidationRow> rows = {with_band(row("a", "X", 11, 10), 10.5, 12.25), row("b", "X", 11, 10)};
  rows[0].finding = "forward, mostly";
  // Row b: the MPT-30B case, a plan estimated at 81.6 GiB of 80 GiB, and run in fp8 with
  // the generic recipe.
  rows[1].oom_need_bytes = 81.6 * 1073741824.0;
  rows[1].oom_capacity_bytes = 80 * 1073741824.0;
  rows[1].generic_dtype = "fp8";
  const std::string csv = format_validation_csv(rows);
  CHECK(csv ==
        "id,file,family,predicted_step_time_s,measured_step_time_s,band_fastest_s,band_slowest_s,band,error_pct,"
        "mfu_predicted_pct,mfu_measured_pct,oom_estimate_GiB,oom_capacity_GiB,generic_recipe_dtype,main_finding,"
        "calibration_family,in_calibration_record\n"
        "a,a.json,X,11.000000,10.000000,10.500000,12.250000,below,10.000,0.000,0.000,,,,\"forward, mostly\",,\n"
        "b,b.json,X,11.000000,10.000000,,,-,10.000,0.000,0.000,81.600000,80.000000,fp8,,,\n");
  const std::string text = format_validation_text(rows, summarize(rows));
  CHECK_THAT(text, Catch::Contains("  OOM est. 81.6 of 80 GiB; generic fp8 recipe  "));
}

TEST_CASE("validation: statistics per prediction family, beside the calibration record's figures") {
  // Family F1 (chip X): a +10 %, b -4 %: mean (10 + 4) / 2 = 7 %, worst +10 % (a).
  // Family F2 (chip X): c -2 %: mean 2 %, worst -2 %. Family F3 (chip W): d +30 %, not in the
  // record: an extrapolation. Row e has no family: counted overall and per chip only.
  std::vector<ValidationRow> rows = {row("a", "X", 11, 10), row("b", "X", 9.6, 10), row("c", "X", 9.8, 10),
                                     row("d", "W", 13, 10), row("e", "W", 10, 10)};
  rows[0].calibration_family = rows[1].calibration_family = "F1";
  rows[2].calibration_family = "F2";
  rows[3].calibration_family = "F3";
  const ValidationSummary s = summarize(rows);
  REQUIRE(s.calibration_families.size() == 3);
  CHECK(s.calibration_families[0].family == "F1");
  CHECK(s.calibration_families[0].files == 2);
  CHECK(s.calibration_families[0].mean_abs_error == Approx(0.07));
  CHECK(s.calibration_families[0].worst_error == Approx(0.10));
  CHECK(s.calibration_families[0].worst_id == "a");
  CHECK(s.calibration_families[1].mean_abs_error == Approx(0.02));
  CHECK(s.calibration_families[1].worst_error == Approx(-0.02));
  CHECK(s.calibration_families[2].family == "F3");
  CHECK(s.calibration_families[2].mean_abs_error == Approx(0.30));
  CHECK(s.all.files == 5);  // e counted overall

  CalibrationRecord record;
  FamilyCalibration f1;
  f1.family = "F1";
  f1.rows = 2;
  f1.leave_one_out = {7.5, 11.0};
  f1.leave_one_family_out = FamilyErrors{12.0, -20.0};
  FamilyCalibration f2;
  f2.family = "F2";
  f2.rows = 1;
  f2.leave_one_out = {2.5, -2.5};
  record.families = {f1, f2};
  record.cross_family = FamilyErrors{12.0, -20.0};
  const std::string text = format_validation_text(rows, s, &record);
  CHECK_THAT(text, Catch::Contains("  F1      2 files: mean |error| 7.0 %, worst +10.0 % (a); leave-one-out 7.5 %, "
                                   "leave-one-family-out 12.0 % (worst -20.0 %)\n"));
  CHECK_THAT(text, Catch::Contains("  F2      1 file: mean |error| 2.0 %, worst -2.0 % (c); leave-one-out 2.5 %, "
                                   "leave-one-family-out -: no other family on this chip\n"));
  CHECK_THAT(text, Catch::Contains("  F3      1 file: mean |error| 30.0 %, worst +30.0 % (d); extrapolation: not in "
                                   "the calibration record\n"));
  CHECK_THAT(text, Catch::Contains("cross-family error (the record's leave-one-family-out predictions): mean |error| "
                                   "12.0 %, worst -20.0 %\n"));
  CHECK_THAT(text, Catch::Contains("  extrapolation  "));  // d's mark in the table
  const std::string csv = format_validation_csv(rows, &record);
  CHECK_THAT(csv, Catch::Contains(",calibration_family,in_calibration_record\n"));
  CHECK_THAT(csv, Catch::Contains(",F1,yes\n"));
  CHECK_THAT(csv, Catch::Contains(",F3,no\n"));
  CHECK_THAT(format_validation_text(rows, s), Catch::Contains("no calibration record"));
}
