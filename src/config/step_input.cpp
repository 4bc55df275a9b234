#include "trnsim/config/step_input.hpp"

#include "trnsim/net/collective.hpp"

namespace trnsim::config {

replay::StepInput step_input(const Experiment& ex) {
  replay::StepInput in;
  in.cluster = ex.cluster;
  in.model = ex.model;
  in.training = ex.training;
  in.parallelism = ex.parallelism;
  in.software = ex.software;
  in.network = ex.network.model;
  in.algorithm = net::parse_algorithm(ex.network.algorithm);
  return in;
}

}  // namespace trnsim::config
