// The registry of network models (include/trnsim/net/network_models.hpp): one row per model.
#include "trnsim/net/network_models.hpp"

#include "analytic_model.hpp"
#include "flow_model.hpp"
#include "network_model.hpp"

namespace trnsim::net {

namespace {
template <class Model>
std::unique_ptr<NetworkModel> make(NetworkContext& context) {
  return std::make_unique<Model>(context);
}

constexpr NetworkModelInfo kModels[] = {
    {NetworkModelKind::Analytic, "analytic", "closed form", &make<AnalyticModel>, true},
    {NetworkModelKind::Flow, "flow", "max-min flows", &make<FlowModel>, false},
};

constexpr bool rows_in_kind_order() {
  for (std::size_t i = 0; i < std::size(kModels); ++i) {
    if (static_cast<std::size_t>(kModels[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_kind_order(), "row i of the registry must hold NetworkModelKind i");
}  // namespace

std::span<const NetworkModelInfo> network_models() { return kModels; }

const NetworkModelInfo& network_model(NetworkModelKind kind) { return kModels[static_cast<std::size_t>(kind)]; }

std::string_view to_string(NetworkModelKind kind) { return network_model(kind).name; }

std::optional<NetworkModelKind> parse_network_model(std::string_view name) {
  for (const NetworkModelInfo& m : kModels) {
    if (m.name == name) return m.kind;
  }
  return std::nullopt;
}

const std::vector<std::string_view>& network_model_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const NetworkModelInfo& m : kModels) v.push_back(m.name);
    return v;
  }();
  return names;
}

}  // namespace trnsim::net
