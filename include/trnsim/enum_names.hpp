#pragma once
// Spellings of enumerated values: one table per enum, declared beside the enum in the header that
// defines it, as a function found by argument-dependent lookup:
//   constexpr auto enum_table(Family) {
//     return std::array{EnumName{Family::Trainium, "trainium"}, EnumName{Family::Gpu, "gpu"}};
//   }
// The helpers below are the only readers of those tables: to_string for output (reports, the
// resolved experiment), parse_enum for input, enum_names for the "expected one of ..." of
// messages. Kept at the top of include/trnsim, like units.hpp: hw and workload declare tables,
// every layer spells.
#include <optional>
#include <string_view>
#include <vector>

namespace trnsim {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};
// Spelled out for compilers without deduction for aggregates (clang 14, the fuzz preset's).
template <class E>
EnumName(E, std::string_view) -> EnumName<E>;

template <class E>
concept NamedEnum = requires(E e) { enum_table(e); };

// The canonical spelling of `value` ("?" for a value outside the table, which a complete table
// never has).
template <NamedEnum E>
constexpr std::string_view to_string(E value) {
  for (const auto& entry : enum_table(E{}))
    if (entry.value == value) return entry.name;
  return "?";
}

// The value spelled `text`, or empty for an unknown spelling.
template <NamedEnum E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  for (const auto& entry : enum_table(E{}))
    if (entry.name == text) return entry.value;
  return std::nullopt;
}

// Every spelling, in the table's order.
template <NamedEnum E>
std::vector<std::string_view> enum_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : enum_table(E{})) names.push_back(entry.name);
  return names;
}

}  // namespace trnsim
