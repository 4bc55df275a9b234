#pragma once
// The spellings of the network model (config::NetworkModelKind). Every other enumerated value is
// spelled by one table beside its enum (trnsim/enum_names.hpp: to_string, parse_enum,
// enum_names).
#include <optional>
#include <string_view>
#include <vector>

#include "trnsim/config/experiment.hpp"

namespace trnsim::config {

// Each enum's spellings, in enum order (for messages and for ObjectReader::choice).
template <class E>
const std::vector<std::string_view>& names_of();
template <>
const std::vector<std::string_view>& names_of<NetworkModelKind>();

inline std::optional<NetworkModelKind> parse_network_model(std::string_view text) {
  const auto& names = names_of<NetworkModelKind>();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return static_cast<NetworkModelKind>(i);
  return std::nullopt;
}

inline std::string_view to_string(NetworkModelKind value) {
  return names_of<NetworkModelKind>().at(static_cast<std::size_t>(value));
}

}  // namespace trnsim::config
