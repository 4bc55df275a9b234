#pragma once
// The spellings of every enumerated configuration value, in one place: parse_* returns empty for
// an unknown spelling, to_string gives the canonical one (the spelling the resolved JSON uses).
#include <optional>
#include <string_view>
#include <vector>

#include "trnsim/config/experiment.hpp"
#include "trnsim/hw/specs.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::config {

// Each enum's spellings, in enum order (for messages and for ObjectReader::choice).
template <class E>
const std::vector<std::string_view>& names_of();
template <>
const std::vector<std::string_view>& names_of<hw::Family>();
template <>
const std::vector<std::string_view>& names_of<hw::Dtype>();
template <>
const std::vector<std::string_view>& names_of<hw::IntraTopology>();
template <>
const std::vector<std::string_view>& names_of<workload::MlpKind>();
template <>
const std::vector<std::string_view>& names_of<workload::NormKind>();
template <>
const std::vector<std::string_view>& names_of<workload::ModelArch>();
template <>
const std::vector<std::string_view>& names_of<workload::Precision>();
template <>
const std::vector<std::string_view>& names_of<workload::Optimizer>();
template <>
const std::vector<std::string_view>& names_of<workload::PipelineSchedule>();
template <>
const std::vector<std::string_view>& names_of<workload::Recompute>();
template <>
const std::vector<std::string_view>& names_of<hw::AttentionKernel>();

template <class E>
std::optional<E> parse_enum(std::string_view text) {
  const auto& names = names_of<E>();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return static_cast<E>(i);
  return std::nullopt;
}

template <class E>
std::string_view to_string(E value) {
  return names_of<E>().at(static_cast<std::size_t>(value));
}

// Named shorthands for the enums other commands parse from the command line.
inline std::optional<hw::Dtype> parse_dtype(std::string_view t) { return parse_enum<hw::Dtype>(t); }
inline std::optional<workload::Precision> parse_precision(std::string_view t) {
  return parse_enum<workload::Precision>(t);
}

}  // namespace trnsim::config
