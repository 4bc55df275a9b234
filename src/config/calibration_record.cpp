// Reading the calibration record (contract in calibration_record.hpp).
#include "trnsim/config/calibration_record.hpp"

#include <filesystem>
#include <limits>

#include <fmt/core.h>

#include "json_reader.hpp"
#include "trnsim/config/json_file.hpp"
#include "trnsim/config/presets.hpp"

namespace trnsim::config {
namespace {

using detail::ObjectReader;
using nlohmann::json;

// Percent errors: a prediction off by more than 10^6 % is not a record of anything.
constexpr detail::Range kAbsPercent{0, 1e6};
constexpr detail::Range kSignedPercent{-1e6, 1e6};

report::FamilyErrors errors(ObjectReader o, bool fitted_allowed) {
  report::FamilyErrors e;
  e.mean_abs_error_pct = o.number("mean_abs_error_pct", kAbsPercent);
  e.worst_error_pct = o.number("worst_error_pct", kSignedPercent);
  if (fitted_allowed) o.raw("fitted");  // the constants of the fit, for the reader
  if (const json* rows = o.raw("rows"); rows != nullptr && !rows->is_number_unsigned())
    o.fail_at("rows", "expected a count of rows, found " + detail::describe(*rows));
  o.finish();
  return e;
}

// A key whose value is an object of errors or null.
std::optional<report::FamilyErrors> nullable_errors(ObjectReader& o, std::string_view key, bool fitted_allowed) {
  if (!o.present(key)) o.fail_at(key, "missing (an object of errors, or null)");
  if (!o.has(key)) {
    o.raw(key);
    return std::nullopt;
  }
  return errors(o.object(key), fitted_allowed);
}

report::FamilyCalibration family(ObjectReader o) {
  report::FamilyCalibration f;
  f.family = o.string("family");
  if (f.family.empty()) o.fail_at("family", "expected a family name, found \"\"");
  f.rows = static_cast<std::size_t>(o.integer("rows", 1));
  f.in_sample = errors(o.object("in_sample"), false);
  f.leave_one_out = errors(o.object("leave_one_out"), false);
  f.leave_one_family_out = nullable_errors(o, "leave_one_family_out", true);
  for (const char* key : {"chip", "software", "release", "note", "per_row"}) o.raw(key);
  o.finish();
  return f;
}

}  // namespace

std::string calibration_record_path() {
  return (std::filesystem::path(config_dir()) / "calibration" / "families.json").string();
}

report::CalibrationRecord parse_calibration_record(const json& document, const std::string& file) {
  ObjectReader top(document, file, "");
  report::CalibrationRecord record;
  record.file = file;
  top.documentation();
  for (const char* key : {"command", "date", "lattice_step", "chips"}) top.raw(key);
  const json* families = top.raw("families");
  if (families == nullptr) top.fail_at("families", "missing (an array of families)");
  if (!families->is_array()) top.fail_at("families", "expected an array, found " + detail::describe(*families));
  for (std::size_t i = 0; i < families->size(); ++i) {
    const std::string path = detail::child_path(top.path_of("families"), std::to_string(i));
    record.families.push_back(family(ObjectReader((*families)[i], file, path)));
    if (record.find(record.families.back().family) != &record.families.back())
      detail::fail(file, path + "/family",
                   fmt::format("expected each family once, found \"{}\" twice", record.families.back().family));
  }
  record.cross_family = nullable_errors(top, "cross_family", false);
  top.finish();
  return record;
}

std::optional<report::CalibrationRecord> read_calibration_record(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return parse_calibration_record(read_json_file(path), path);
}

}  // namespace trnsim::config
