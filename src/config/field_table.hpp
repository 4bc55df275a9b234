#pragma once
// One table per configuration struct, one row per field: the JSON key (its unit in the name), the
// factor to SI, the physical range, the default or that it is required, what it is. The generic
// code below is the only reader and writer of the fields: it parses an object (types, ranges,
// unknown keys, through ObjectReader) and writes the struct back into the resolved experiment,
// which `--dry-run` prints, reports embed and `--set` edits (the edited document is parsed the
// same way, so an override meets the same rows). Adding a field is one row.
// The tables: hardware_fields.cpp (hw specs), workload_fields.cpp (model, training, parallelism),
// software_fields.cpp (software presets and their collective library), experiment_fields.cpp
// (network, measured).
//
// A row is built by one of the functions at the end, e.g.
//   number<&hw::LinkSpec::latency>("latency_us", kMicro, kLatencyUs, "per hop")
//   integer<&hw::FabricSpec::leaf_radix>("leaf_radix", {2, 65536}, "downlinks per leaf").or_default(64)
// and the member's type chooses how it is read: double (a number in the range, times the unit),
// integers (whole numbers in the range), bool, std::string, an enum with a table
// (trnsim/enum_names.hpp), std::optional of those (null = not set), or a struct with its own
// table (object<>). Rows run in order, so a row may depend on the ones above it (`only_if`,
// `required_if`, `check`). A derived row (derived<>) is a figure that follows from others: it is
// written under the object's "derived" key for users to see and is never an input.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "json_reader.hpp"
#include "trnsim/enum_names.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::config::detail {

enum class Need : std::uint8_t {
  Required,  // absent is an error
  Default,   // absent: the row's default (an enum: null too)
  Nullable,  // a std::optional member: absent or null leaves it unset ("not published")
  Optional,  // absent: the struct's own default, or an error when `required` holds
};

template <class S>
struct Field {
  using Owner = S;
  using Read = void (*)(const Field&, ObjectReader&, S&);
  using Write = void (*)(const Field&, const S&, json&);
  using Test = bool (*)(const S&);
  using Check = void (*)(ObjectReader&, S&);

  std::string_view key = {};     // empty: a row without a key (documentation, a rule)
  std::string_view doc = {};     // what the value is
  double unit = 1;               // SI per unit of the key
  Range range{};                 // numbers and integers, in the key's unit
  Need need = Need::Required;
  double fallback = 0;           // Need::Default of a number, integer, bool or enum (its index)
  std::string_view text_fallback = {};  // Need::Default of a string
  std::string_view derived_from = {};   // derived rows: the JSON path it follows from, relative to
                                        // the object ("../peak/bf16_tflops")
  double (*fallback_of)(const S&) = nullptr;  // Need::Default computed from the rows above (SI)
  Test applies = nullptr;        // the key exists only when this holds (otherwise it is unknown)
  Test required = nullptr;       // Need::Optional: required when this holds
  Test written = nullptr;        // Need::Optional: written back only when this holds
  Read read = nullptr;
  Write write = nullptr;
  Check check = nullptr;         // runs after the value is read: checks across fields

  template <class V>
  constexpr Field or_default(V value) const {
    Field f = *this;
    f.need = Need::Default;
    if constexpr (std::is_convertible_v<V, std::string_view>) f.text_fallback = value;
    else if constexpr (std::is_enum_v<V>) f.fallback = static_cast<double>(static_cast<std::underlying_type_t<V>>(value));
    else f.fallback = static_cast<double>(value);
    return f;
  }
  constexpr Field or_default_from(double (*fn)(const S&)) const {
    Field f = *this;
    f.need = Need::Default;
    f.fallback_of = fn;
    return f;
  }
  constexpr Field nullable() const { return with(&Field::need, Need::Nullable); }
  constexpr Field optional(Test written_when = nullptr) const {
    Field f = with(&Field::need, Need::Optional);
    f.written = written_when;
    return f;
  }
  constexpr Field required_if(Test when) const { return with(&Field::required, when); }
  constexpr Field only_if(Test when) const { return with(&Field::applies, when); }
  constexpr Field then(Check fn) const { return with(&Field::check, fn); }

 private:
  template <class M, class V>
  constexpr Field with(M Field::*member, V value) const {
    Field f = *this;
    f.*member = value;
    return f;
  }
};

// Reads the rows of `table` from `r` into `s`; the caller finishes `r` (it may hold more keys).
template <class S>
void read_fields(ObjectReader& r, S& s, std::span<const Field<S>> table) {
  for (const Field<S>& f : table) {
    if (f.applies != nullptr && !f.applies(s)) continue;
    if (f.read != nullptr) f.read(f, r, s);
    if (f.check != nullptr) f.check(r, s);
  }
}

// Reads a whole object: its rows, then no other key.
template <class S>
S read_struct(ObjectReader r, std::span<const Field<S>> table) {
  S s;
  read_fields(r, s, table);
  r.finish();
  return s;
}

// The rows of `table` as a JSON object, values in the keys' units.
template <class S>
json write_fields(const S& s, std::span<const Field<S>> table) {
  json out = json::object();
  for (const Field<S>& f : table) {
    if (f.applies != nullptr && !f.applies(s)) continue;
    if (f.need == Need::Optional && f.written != nullptr && !f.written(s)) continue;
    if (f.write != nullptr) f.write(f, s, out);
  }
  return out;
}

// Whether `key` is a row written back only when set (Field::optional with a test): the resolved
// experiment leaves it out at its default, yet it is an input (--set may add it).
template <class S>
bool written_only_when_set(std::span<const Field<S>> table, std::string_view key) {
  for (const Field<S>& f : table)
    if (f.key == key && f.need == Need::Optional && f.written != nullptr) return true;
  return false;
}

namespace field_impl {

template <class P>
struct pointer_traits;
template <class S, class T>
struct pointer_traits<T S::*> {
  using owner = S;
  using value = T;
};
template <auto M>
using owner_t = typename pointer_traits<decltype(M)>::owner;
template <auto M>
using value_t = typename pointer_traits<decltype(M)>::value;

// A path of member pointers from a struct to a field: &InstanceSpec::efa, &LinkSpec::bandwidth.
template <auto M, auto... More>
struct MemberPath {
  using owner = owner_t<M>;
  template <class S>
  static auto& get(S& s) {
    return ((s .* M) .* ... .* More);
  }
  using value = std::remove_cvref_t<decltype(get(std::declval<owner&>()))>;
};

template <class T>
struct optional_traits {
  static constexpr bool is_optional = false;
  using value = T;
};
template <class T>
struct optional_traits<std::optional<T>> {
  static constexpr bool is_optional = true;
  using value = T;
};

// One value of type T (never optional) from r's key.
template <class T, class S>
T read_value(const Field<S>& f, ObjectReader& r) {
  if constexpr (std::is_same_v<T, double>) {
    return r.number(f.key, f.range) * f.unit;
  } else if constexpr (std::is_same_v<T, bool>) {
    return r.boolean(f.key);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(
        r.integer(f.key, static_cast<std::int64_t>(f.range.min), static_cast<std::int64_t>(f.range.max)));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return r.string(f.key);
  } else if constexpr (std::is_same_v<T, workload::Recompute>) {
    // Not a fixed table: full-every-N takes any N in its range (specs.hpp).
    const json* v = r.raw(f.key);
    if (v == nullptr || v->is_null())
      r.fail_at(f.key, fmt::format("missing required field (expected {})", workload::kRecomputeExpected));
    if (v->is_string()) {
      if (const auto mode = workload::parse_recompute(v->get<std::string>())) return *mode;
    }
    r.fail_at(f.key, fmt::format("expected {}, found {}", workload::kRecomputeExpected, describe(*v)));
  } else {
    static_assert(NamedEnum<T>, "a field is a number, integer, bool, string or an enum with a table");
    return r.choice<T>(f.key);
  }
}

template <class T, class S>
T fallback_value(const Field<S>& f, const S& s) {
  if constexpr (std::is_same_v<T, std::string>) {
    return std::string(f.text_fallback);
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<T>(static_cast<std::underlying_type_t<T>>(f.fallback));
  } else {
    if (f.fallback_of != nullptr) return static_cast<T>(f.fallback_of(s));
    if constexpr (std::is_same_v<T, double>) return f.fallback * f.unit;
    else return static_cast<T>(f.fallback);
  }
}

template <class T, class S>
json write_value(const Field<S>& f, const T& v) {
  if constexpr (std::is_same_v<T, double>) return v / f.unit;
  else if constexpr (std::is_same_v<T, workload::Recompute>) return workload::recompute_text(v);
  else if constexpr (std::is_enum_v<T>) return trnsim::to_string(v);
  else return v;
}

template <auto... Ms>
void read_member(const Field<typename MemberPath<Ms...>::owner>& f, ObjectReader& r,
                 typename MemberPath<Ms...>::owner& s) {
  using T = typename MemberPath<Ms...>::value;
  T& member = MemberPath<Ms...>::get(s);
  using V = typename optional_traits<T>::value;
  if constexpr (optional_traits<T>::is_optional) {
    // Nullable: absent or null is "not set".
    (void)r.raw(f.key);
    member = r.has(f.key) ? std::optional<V>(read_value<V>(f, r)) : std::nullopt;
  } else {
    (void)r.raw(f.key);
    // An enum's default also covers null (a choice left open); any other null is an error.
    const bool given = std::is_enum_v<T> ? r.has(f.key) : r.present(f.key);
    switch (f.need) {
      case Need::Required: member = read_value<T>(f, r); break;
      case Need::Default: member = given ? read_value<T>(f, r) : fallback_value<T>(f, s); break;
      case Need::Nullable:
      case Need::Optional:
        if (given || (f.required != nullptr && f.required(s))) member = read_value<T>(f, r);
        break;
    }
  }
}

template <auto... Ms>
void write_member(const Field<typename MemberPath<Ms...>::owner>& f, const typename MemberPath<Ms...>::owner& s,
                  json& out) {
  using T = typename MemberPath<Ms...>::value;
  const T& v = MemberPath<Ms...>::get(s);
  if constexpr (optional_traits<T>::is_optional) {
    out[std::string(f.key)] = v ? write_value(f, *v) : json(nullptr);
  } else {
    // An optional field without a condition is written when it differs from its type's default.
    if (f.need == Need::Optional && f.written == nullptr && v == T{}) return;
    out[std::string(f.key)] = write_value(f, v);
  }
}

template <auto M, const auto& Table>
void read_object(const Field<owner_t<M>>& f, ObjectReader& r, owner_t<M>& s) {
  using T = value_t<M>;
  const bool needed = f.need == Need::Required || (f.required != nullptr && f.required(s));
  if (needed || r.present(f.key)) s.*M = read_struct<T>(r.object(f.key), Table);
  else (void)r.raw(f.key);
}

template <auto M, const auto& Table>
void write_object(const Field<owner_t<M>>& f, const owner_t<M>& s, json& out) {
  out[std::string(f.key)] = write_fields<value_t<M>>(s.*M, Table);
}

template <class S, const auto& Table>
void read_group(const Field<S>& f, ObjectReader& r, S& s) {
  ObjectReader group = r.object(f.key);
  read_fields<S>(group, s, Table);
  group.finish();
}

template <class S, const auto& Table>
void write_group(const Field<S>& f, const S& s, json& out) {
  out[std::string(f.key)] = write_fields<S>(s, Table);
}

// "../a/b" relative to the object at `path`: each "../" steps up one key.
inline std::string resolve_path(std::string path, std::string_view relative) {
  while (relative.substr(0, 3) == "../") {
    path = path.substr(0, path.rfind('/'));
    relative.remove_prefix(3);
  }
  return path + "/" + std::string(relative);
}

template <class S>
void read_derived(const Field<S>& f, ObjectReader& r, S&) {
  (void)r.raw("derived");  // output only; check_derived compares it with what the rule derived
  if (r.present(f.key))
    r.fail_at(f.key, fmt::format("derived from {} ({}), not an input: set that instead",
                                 resolve_path(r.path(), f.derived_from), f.doc));
}

template <auto... Ms>
void write_derived(const Field<typename MemberPath<Ms...>::owner>& f, const typename MemberPath<Ms...>::owner& s,
                   json& out) {
  const double v = MemberPath<Ms...>::get(s);
  if (v != 0) out["derived"][std::string(f.key)] = v / f.unit;
}

template <class S>
void read_documentation(const Field<S>&, ObjectReader& r, S&) {
  r.documentation();
}

template <auto M>
void read_source(const Field<owner_t<M>>&, ObjectReader& r, owner_t<M>& s) {
  s.*M = r.source();
}

}  // namespace field_impl

// The rows of a member (or a member's member: number<&InstanceSpec::efa, &LinkSpec::latency>).
template <auto... Ms>
using FieldOf = Field<typename field_impl::MemberPath<Ms...>::owner>;
template <auto... Ms>
using ValueOf = typename field_impl::optional_traits<typename field_impl::MemberPath<Ms...>::value>::value;

// A number (double): the JSON value in [range] times `unit` (SI per key unit).
template <auto... Ms>
constexpr FieldOf<Ms...> number(std::string_view key, double unit, Range range, std::string_view doc) {
  static_assert(std::is_same_v<ValueOf<Ms...>, double>);
  return {.key = key, .doc = doc, .unit = unit, .range = range, .read = &field_impl::read_member<Ms...>,
          .write = &field_impl::write_member<Ms...>};
}

// A whole number (int, int64 or an optional of them) in [range].
template <auto... Ms>
constexpr FieldOf<Ms...> integer(std::string_view key, Range range, std::string_view doc) {
  static_assert(std::is_integral_v<ValueOf<Ms...>> && !std::is_same_v<ValueOf<Ms...>, bool>);
  return {.key = key, .doc = doc, .range = range, .read = &field_impl::read_member<Ms...>,
          .write = &field_impl::write_member<Ms...>};
}

// A bool, string or enum (or an optional of them): no unit, no range.
template <auto... Ms>
constexpr FieldOf<Ms...> value(std::string_view key, std::string_view doc) {
  static_assert(!std::is_arithmetic_v<ValueOf<Ms...>> || std::is_same_v<ValueOf<Ms...>, bool>);
  return {.key = key, .doc = doc, .read = &field_impl::read_member<Ms...>, .write = &field_impl::write_member<Ms...>};
}

// A struct member read from the JSON object `key` by its own table.
template <auto M, const auto& Table>
constexpr Field<field_impl::owner_t<M>> object(std::string_view key, std::string_view doc) {
  return {.key = key, .doc = doc, .read = &field_impl::read_object<M, Table>,
          .write = &field_impl::write_object<M, Table>};
}

// A JSON object `key` whose rows (Table) are fields of the same struct ("efa" of an instance).
template <class S, const auto& Table>
constexpr Field<S> group(std::string_view key, std::string_view doc) {
  return {.key = key, .doc = doc, .read = &field_impl::read_group<S, Table>, .write = &field_impl::write_group<S, Table>};
}

// The documentation keys every object may carry ("source", "sources", "notes", "description").
template <class S>
constexpr Field<S> documentation() {
  return {.read = &field_impl::read_documentation<S>};
}

// A member that receives the object's "source" (or its "sources" joined); read only.
template <auto M>
constexpr Field<field_impl::owner_t<M>> source() {
  return {.read = &field_impl::read_source<M>};
}

// A figure derived from `from` (a JSON path relative to this object) by a rule of the table that
// holds this struct, `doc` saying how; written under "derived" when not 0, rejected as input.
template <auto... Ms>
constexpr FieldOf<Ms...> derived(std::string_view key, double unit, std::string_view from, std::string_view doc) {
  static_assert(std::is_same_v<ValueOf<Ms...>, double>);
  return {.key = key, .doc = doc, .unit = unit, .need = Need::Optional, .derived_from = from,
          .read = &field_impl::read_derived<typename FieldOf<Ms...>::Owner>, .write = &field_impl::write_derived<Ms...>};
}

// After a rule derived the fields of `s`: the "derived" object of `r` (the object `s` was read
// from), when the input has one (a --dry-run output read again), must hold exactly what the rule
// derived; it is output only.
template <class S>
void check_derived(ObjectReader r, const S& s, std::span<const Field<S>> table) {
  const json* given = r.raw("derived");
  if (given == nullptr) return;
  if (!given->is_object()) r.fail_at("derived", "expected an object, found " + describe(*given));
  const json written = write_fields<S>(s, table);
  const json expected = written.contains("derived") ? written["derived"] : json::object();
  const std::string here = child_path(r.path(), "derived");
  for (const auto& [key, value] : given->items()) {
    const Field<S>* row = nullptr;
    for (const Field<S>& f : table)
      if (!f.derived_from.empty() && f.key == key) row = &f;
    if (row == nullptr || !expected.contains(key)) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : expected.items()) keys.push_back(k);
      fail(r.file(), child_path(here, key),
           keys.empty() ? std::string("unknown key (nothing is derived here)")
                        : fmt::format("unknown key (derived here: {})", fmt::join(keys, ", ")));
    }
    if (!value.is_number() || value.template get<double>() != expected[key].template get<double>())
      fail(r.file(), child_path(here, key),
           fmt::format("derived from {} ({}): {}, found {}; it is output only: remove it or set that instead",
                       field_impl::resolve_path(r.path(), row->derived_from), row->doc, expected[key].dump(), describe(value)));
  }
}

// A check across the rows above it.
template <class S>
constexpr Field<S> rule(typename Field<S>::Check fn) {
  return {.check = fn};
}

}  // namespace trnsim::config::detail
