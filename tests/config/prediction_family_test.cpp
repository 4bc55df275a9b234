// The family of a prediction (config/prediction_family.hpp) and the calibration record's reader
// (config/calibration_record.hpp). Expected families written from the presets' documentation:
// the chip names of configs/hardware, the software each file or instance names, and the collective
// runtime release each Neuron software preset states (NCCL names none).
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/calibration_record.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/prediction_family.hpp"

using namespace trnsim;

namespace {

std::string family_of(const std::string& relative, const std::vector<std::string>& overrides = {}) {
  return config::prediction_family(config::load_experiment(test::source_path(relative), overrides)).name();
}

// A record of two families on one chip, as tools/calibrate.py --families writes it (keys it does
// not read included).
nlohmann::json small_record() {
  return nlohmann::json::parse(R"({
    "description": "test", "command": "tools/calibrate.py --families x.json", "date": "2025-01-01",
    "lattice_step": 0.002, "chips": [],
    "families": [
      {"family": "Trainium x neuronx-distributed@2.19", "chip": "Trainium", "software": "neuronx-distributed",
       "release": "2.19", "rows": 2,
       "in_sample": {"mean_abs_error_pct": 1.5, "worst_error_pct": 2.5},
       "leave_one_out": {"mean_abs_error_pct": 2.0, "worst_error_pct": -3.0},
       "leave_one_family_out": {"mean_abs_error_pct": 8.0, "worst_error_pct": -9.0, "fitted": {"task_overhead_us": 2}},
       "per_row": []},
      {"family": "Trainium x neuron-pytorch-dp@2.19", "chip": "Trainium", "software": "neuron-pytorch-dp",
       "release": "2.19", "rows": 1,
       "in_sample": {"mean_abs_error_pct": 0.5, "worst_error_pct": 0.5},
       "leave_one_out": {"mean_abs_error_pct": 0.7, "worst_error_pct": 0.7},
       "leave_one_family_out": null, "note": "no other family on this chip", "per_row": []}
    ],
    "cross_family": {"mean_abs_error_pct": 8.0, "worst_error_pct": -9.0, "rows": 2}
  })");
}

}  // namespace

TEST_CASE("prediction family: chip x software preset x collective runtime release") {
  SECTION("A100 under Megatron-LM 2021 (NCCL: no release)") {
    CHECK(family_of("configs/validation/megatron2021-t1-1.7b.json") == "A100-SXM4-80GB x megatron-lm-2021");
  }
  SECTION("trn1 under NxD, the Neuron runtime release the preset names") {
    CHECK(family_of("configs/validation/neuron-trn1-llama2-7b.json") == "Trainium x neuronx-distributed@2.19");
    CHECK(family_of("configs/validation/neuron-trn1-gpt3-23b.json") == "Trainium x neuronx-nemo-megatron@2.9");
  }
  SECTION("an experiment that names no software takes the instance's") {
    CHECK(family_of("configs/examples/llama3.1-8b-trn2.json") == "Trainium2 x neuronx-distributed@2.19");
  }
  SECTION("--set software and cluster.instance move the family") {
    CHECK(family_of("configs/examples/llama3.1-8b-trn2.json", {"software=torchtitan-neuron"}) ==
          "Trainium2 x torchtitan-neuron@2.19");
    const config::PredictionFamily f = config::prediction_family(config::load_experiment(
        test::source_path("configs/validation/megatron2021-t1-1.7b.json"), {"cluster.instance=p5.48xlarge"}));
    CHECK(f.chip == "H100-SXM5-80GB");
    CHECK(f.software == "megatron-lm-2021");
    CHECK(f.release.empty());
  }
}

TEST_CASE("calibration record: a well-formed record is read, extra keys and all") {
  const report::CalibrationRecord r = config::parse_calibration_record(small_record(), "families.json");
  REQUIRE(r.families.size() == 2);
  CHECK(r.families[0].rows == 2);
  CHECK(r.families[0].leave_one_out.mean_abs_error_pct == 2.0);
  REQUIRE(r.families[0].leave_one_family_out);
  CHECK(r.families[0].leave_one_family_out->worst_error_pct == -9.0);
  CHECK(!r.families[1].leave_one_family_out);
  REQUIRE(r.cross_family);
  CHECK(r.cross_family->mean_abs_error_pct == 8.0);
  CHECK(r.find("Trainium x neuron-pytorch-dp@2.19") == &r.families[1]);
  CHECK(r.find("Trainium2 x neuronx-distributed@2.19") == nullptr);
}

TEST_CASE("calibration record: a malformed record is refused naming the file and the JSON path") {
  SECTION("a count of rows that is not one") {
    nlohmann::json doc = small_record();
    doc["families"][1]["rows"] = "one";
    CHECK(test::input_error([&] { config::parse_calibration_record(doc, "families.json"); }) ==
          "families.json: /families/1/rows: expected an integer >= 1, found \"one\"");
  }
  SECTION("a missing leave-one-out block") {
    nlohmann::json doc = small_record();
    doc["families"][0].erase("leave_one_out");
    CHECK_THAT(test::input_error([&] { config::parse_calibration_record(doc, "families.json"); }),
               Catch::StartsWith("families.json: /families/0/leave_one_out: "));
  }
  SECTION("a negative mean error") {
    nlohmann::json doc = small_record();
    doc["cross_family"]["mean_abs_error_pct"] = -1;
    CHECK_THAT(test::input_error([&] { config::parse_calibration_record(doc, "families.json"); }),
               Catch::StartsWith("families.json: /cross_family/mean_abs_error_pct: expected a number in [0, "));
  }
  SECTION("a family given twice, an unknown key, families not an array") {
    nlohmann::json doc = small_record();
    doc["families"][1]["family"] = doc["families"][0]["family"];
    CHECK_THAT(test::input_error([&] { config::parse_calibration_record(doc, "f.json"); }),
               Catch::StartsWith("f.json: /families/1/family: expected each family once"));
    doc = small_record();
    doc["familes"] = 1;
    CHECK_THAT(test::input_error([&] { config::parse_calibration_record(doc, "f.json"); }),
               Catch::StartsWith("f.json: /familes: "));
    doc = small_record();
    doc["families"] = 3;
    CHECK(test::input_error([&] { config::parse_calibration_record(doc, "f.json"); }) ==
          "f.json: /families: expected an array, found 3");
  }
  SECTION("a file that is not JSON; no file at all is no record") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "trnsim-record-test";
    fs::create_directories(dir);
    std::ofstream(dir / "families.json") << "{\"families\": [";
    CHECK_THAT(test::input_error([&] { config::read_calibration_record((dir / "families.json").string()); }),
               Catch::StartsWith((dir / "families.json").string() + ": invalid JSON"));
    CHECK(!config::read_calibration_record((dir / "absent.json").string()));
    fs::remove_all(dir);
  }
}
