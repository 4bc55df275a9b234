#include "step_input.hpp"

#include <fstream>

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"

namespace trnsim::cli {

replay::StepInput step_input(const config::Experiment& ex) {
  replay::StepInput in;
  in.cluster = ex.cluster;
  in.model = ex.model;
  in.training = ex.training;
  in.parallelism = ex.parallelism;
  in.network = ex.network.model == config::NetworkModelKind::Flow ? net::NetworkModel::Flow
                                                                   : net::NetworkModel::Analytic;
  in.algorithm = net::parse_algorithm(ex.network.algorithm);
  return in;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(fmt::format("{}: cannot open for writing", path));
  out << text;
  if (!out.flush()) throw InputError(fmt::format("{}: write failed", path));
}

}  // namespace trnsim::cli
