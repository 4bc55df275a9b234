// The --network option of `run` and `collective`: names and help from the registry of network
// models (include/trnsim/net/network_models.hpp), so that a new model needs no CLI change.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "trnsim/net/network_models.hpp"

namespace trnsim::cli {

std::string network_model_help() {
  std::vector<std::string> models;
  for (const auto& m : net::network_models()) models.push_back(fmt::format("{} ({})", m.name, m.description));
  return fmt::format("Network model: {}", fmt::join(models, " or "));
}

std::vector<std::string> network_model_choices() {
  const auto& names = net::network_model_names();
  return {names.begin(), names.end()};
}

}  // namespace trnsim::cli
