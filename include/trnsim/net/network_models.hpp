#pragma once
// The network models trnsim can run, by name: one row per model, its name as the configuration
// (`network.model`), the command line (`--network`) and the reports spell it, a description for
// help texts, and the factory net::Network uses (as SimGrid registers its network models).
// Adding a model: a NetworkModel implementation in src/net/ and its row in src/net/network_models.cpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace trnsim::net {

class NetworkModel;
struct NetworkContext;

enum class NetworkModelKind : std::uint8_t {
  Analytic,  // closed-form alpha-beta time per call, no contention between calls
  Flow,      // every call and transfer as flows sharing links max-min fairly
};

struct NetworkModelInfo {
  NetworkModelKind kind;
  std::string_view name;
  std::string_view description;
  // Builds the model over the shared context (src/net/network_model.hpp), which outlives it.
  std::unique_ptr<NetworkModel> (*make)(NetworkContext& context);
  // Whether its link figures are sums over calls, so that calls can be set aside
  // (Network::set_aside): the analytic model's are; the flow model's busy times are not.
  bool sets_aside = false;
};

// Contract: the registered models, in NetworkModelKind order (row i has kind i). O(1).
std::span<const NetworkModelInfo> network_models();
// Contract: the row of `kind`. O(1).
const NetworkModelInfo& network_model(NetworkModelKind kind);
std::string_view to_string(NetworkModelKind kind);
// Contract: the model named `name`, or empty for a name no row has. O(models).
std::optional<NetworkModelKind> parse_network_model(std::string_view name);
// The names in NetworkModelKind order (for choices in configuration readers and the CLI).
const std::vector<std::string_view>& network_model_names();

}  // namespace trnsim::net
