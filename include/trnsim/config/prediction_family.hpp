#pragma once
// The family a prediction belongs to: the chip it runs on x the software preset x the collective
// runtime release that software names. The calibration record (configs/calibration/families.json,
// report/analysis/calibration.hpp) states the error measured per family; tools/calibrate.py
// --families groups the validation rows by the same three fields of the resolved experiment.
#include <string>

#include "trnsim/config/experiment.hpp"

namespace trnsim::config {

struct PredictionFamily {
  std::string chip;      // the instance's chip name: "Trainium", "A100-SXM4-80GB"
  std::string software;  // the software preset's name: "neuronx-distributed"
  std::string release;   // software.collectives.release: "2.19"; "" where none is named (NCCL)
  // "Trainium x neuronx-distributed@2.19", "A100-SXM4-80GB x megatron-lm-2021".
  std::string name() const;
};

// Contract: the family of a loaded experiment (after presets and --set). O(1).
PredictionFamily prediction_family(const Experiment& experiment);

}  // namespace trnsim::config
