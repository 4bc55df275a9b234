// The family of a prediction (contract in prediction_family.hpp).
#include "trnsim/config/prediction_family.hpp"

namespace trnsim::config {

std::string PredictionFamily::name() const {
  // tools/calibration_families.py, family_name, spells it the same way.
  return chip + " x " + software + (release.empty() ? "" : "@" + release);
}

PredictionFamily prediction_family(const Experiment& experiment) {
  return {experiment.cluster.instance.chip.name, experiment.software.name, experiment.software.collectives.release};
}

}  // namespace trnsim::config
