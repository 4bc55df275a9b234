// The error bar of a prediction in the text and JSON reports (report/analysis/calibration.hpp,
// src/report/writers/calibration_bar.cpp), on a record made by hand.
#include <catch2/catch.hpp>

#include "report_support.hpp"
#include "trnsim/report/analysis/calibration.hpp"
#include "trnsim/report/writers/json_report.hpp"
#include "trnsim/report/writers/text_report.hpp"

using namespace trnsim;
using nlohmann::json;

namespace {

// One trn1 family with two rows (in-sample 1.5 %, worst +2.5 %; leave-one-out 2.0 %;
// leave-one-family-out 8.0 %); a cross-family error of 8.0 %.
report::CalibrationRecord record() {
  report::CalibrationRecord r;
  r.file = "families.json";
  report::FamilyCalibration f;
  f.family = "Trainium x neuronx-distributed@2.19";
  f.rows = 2;
  f.in_sample = {1.5, 2.5};
  f.leave_one_out = {2.0, -3.0};
  f.leave_one_family_out = report::FamilyErrors{8.0, -9.0};
  r.families.push_back(f);
  r.cross_family = report::FamilyErrors{8.0, -9.0};
  return r;
}

const test::AnalysedRun& run() {
  static const test::AnalysedRun a = test::analyse_json(test::small_decoder(1, 2, 4, 2, 4, 16));
  return a;
}

}  // namespace

TEST_CASE("error bar: an experiment in a calibrated family states its rows and leave-one-out error") {
  const report::CalibrationRecord rec = record();
  report::StepReport rep = run().report;
  rep.calibration = report::error_bar("Trainium x neuronx-distributed@2.19", &rec);
  const json c = report::to_json(rep, run().experiment.resolved)["calibration"];
  CHECK(c["family"] == "Trainium x neuronx-distributed@2.19");
  CHECK(c["record"] == true);
  CHECK(c["in_family"] == true);
  CHECK(c["rows"] == 2);
  CHECK(c["mean_abs_error_pct"] == 1.5);
  CHECK(c["worst_error_pct"] == 2.5);
  CHECK(c["leave_one_out_error_pct"] == 2.0);
  CHECK(c["leave_one_family_out_error_pct"] == 8.0);
  CHECK(c["cross_family_error_pct"] == 8.0);
  CHECK(c["note"] == "calibrated family");
  CHECK_THAT(report::format_text(rep, false),
             Catch::Contains("error bar  Trainium x neuronx-distributed@2.19: 2 published rows, leave-one-out mean "
                             "|error| 2.0 %, in-sample 1.5 % (worst +2.5 %), leave-one-family-out 8.0 %\n"));
}

TEST_CASE("error bar: outside every calibrated family the report says extrapolation and the cross-family error") {
  const report::CalibrationRecord rec = record();
  report::StepReport rep = run().report;
  rep.calibration = report::error_bar("Trainium2 x neuronx-distributed@2.19", &rec);
  const json c = report::to_json(rep, run().experiment.resolved)["calibration"];
  CHECK(c["in_family"] == false);
  CHECK(c["rows"] == 0);
  CHECK(c["leave_one_out_error_pct"].is_null());
  CHECK(c["leave_one_family_out_error_pct"].is_null());
  CHECK(c["cross_family_error_pct"] == 8.0);
  CHECK_THAT(c["note"].get<std::string>(), Catch::StartsWith("extrapolation"));
  CHECK_THAT(report::format_text(rep, false),
             Catch::Contains("error bar  Trainium2 x neuronx-distributed@2.19: extrapolation, no published row of this "
                             "family; cross-family error 8.0 %"));
}

TEST_CASE("error bar: without a record the report says so, and reports of other commands carry none") {
  report::StepReport rep = run().report;
  CHECK_FALSE(report::to_json(rep, run().experiment.resolved).contains("calibration"));
  CHECK_THAT(report::format_text(rep, false), !Catch::Contains("error bar"));
  rep.calibration = report::error_bar("Trainium x neuronx-distributed@2.19", nullptr);
  const json c = report::to_json(rep, run().experiment.resolved)["calibration"];
  CHECK(c["record"] == false);
  CHECK(c["in_family"] == false);
  CHECK(c["cross_family_error_pct"].is_null());
  CHECK_THAT(c["note"].get<std::string>(), Catch::StartsWith("no calibration record"));
}
