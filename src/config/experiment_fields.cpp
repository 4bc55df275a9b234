// The field tables of an experiment's network and measured objects (config/experiment.hpp).
#include <fmt/core.h>

#include "field_table.hpp"
#include "parse.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/net/network_models.hpp"

namespace trnsim::config::detail {
namespace {

// The network model's names are the net layer's model registry (net/network_models.hpp), so its
// row reads and writes them itself.
Field<NetworkOptions> network_model_row() {
  Field<NetworkOptions> f;
  f.key = "model";
  f.doc = "analytic (closed form) or flow (max-min fair flows)";
  f.need = Need::Default;
  f.read = [](const Field<NetworkOptions>&, ObjectReader& r, NetworkOptions& n) {
    n.model = static_cast<net::NetworkModelKind>(r.optional_choice("model", net::network_model_names()).value_or(0));
  };
  f.write = [](const Field<NetworkOptions>&, const NetworkOptions& n, json& out) { out["model"] = net::to_string(n.model); };
  return f;
}

const Field<NetworkOptions> kNetworkFields[] = {
    documentation<NetworkOptions>(),
    network_model_row(),
    value<&NetworkOptions::algorithm>("algorithm", "auto (the software's collective library chooses), optimal (the analytic optimum, a what-if) or an algorithm")
        .or_default("auto")
        .then([](ObjectReader& r, NetworkOptions& n) {
          // The algorithm names belong to the net layer; checked here so that a bad name names its file.
          try {
            (void)net::parse_algorithm(n.algorithm);
          } catch (const trnsim::InputError& e) {
            r.fail_at("algorithm", e.what());
          }
        }),
};

// No documentation keys: a measured object holds what was published, nothing else.
constexpr Field<Measured> kMeasuredFields[] = {
    number<&Measured::step_time_s>("step_time_s", 1, {0, 1e9}, "measured seconds per optimizer step")
        .then([](ObjectReader& r, Measured& m) {
          if (m.step_time_s <= 0)
            r.fail_at("step_time_s", fmt::format("expected a measured step time > 0 seconds, found {}", m.step_time_s));
        }),
    // Written back only when given: an empty string was not in the file.
    value<&Measured::published>("published", "the figure as published").optional(),
    value<&Measured::derivation>("derivation", "how the step time follows from it").optional(),
    value<&Measured::unpublished>("unpublished", "what the source leaves open").optional(),
    value<&Measured::note>("note", "anything else").optional(),
};

}  // namespace

NetworkOptions parse_network(ObjectReader r) { return read_struct<NetworkOptions>(std::move(r), kNetworkFields); }
Measured parse_measured(ObjectReader r) { return read_struct<Measured>(std::move(r), kMeasuredFields); }

json to_json(const NetworkOptions& network) { return write_fields<NetworkOptions>(network, kNetworkFields); }
json to_json(const Measured& measured) { return write_fields<Measured>(measured, kMeasuredFields); }

}  // namespace trnsim::config::detail
