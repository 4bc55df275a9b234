// A sweep to and from JSON (format in explore/sweep_json.hpp), and merging its shards.
#include "trnsim/explore/sweep_json.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>
#include <fmt/format.h>

#include "trnsim/enum_names.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::explore {

using nlohmann::json;

namespace {

const char* const kSweepKind = "trnsim-sweep";

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

json plan_json(const PlanOutcome& o) {
  json j{{"index", o.index}, {"vary", o.vary}, {"status", status_name(o.status)}};
  if (!o.reason.empty()) j["reason"] = o.reason;
  if (!o.detail.empty()) j["detail"] = o.detail;
  put(j, "tp", o.tp);
  put(j, "pp", o.pp);
  put(j, "dp", o.dp);
  put(j, "micro_batch", o.micro_batch);
  put(j, "virtual_stages", o.virtual_stages);
  put(j, "schedule", o.schedule);
  put(j, "recompute", o.recompute);
  put(j, "zero", o.zero);
  put(j, "sequence_parallel", o.sequence_parallel);
  if (o.status == PlanStatus::Invalid) return j;
  j["peak_memory_bytes"] = o.peak_memory_bytes;
  j["capacity_bytes"] = o.capacity_bytes;
  if (o.lower_bound_s > 0) j["lower_bound_s"] = o.lower_bound_s;
  if (o.status == PlanStatus::OutOfMemory || o.status == PlanStatus::Pruned) return j;
  j["step_time_s"] = o.step_time_s;
  j["tokens_per_s"] = o.tokens_per_s;
  j["mfu"] = o.mfu;
  json parts = json::object();
  for (int p = 0; p < report::kPartCount; ++p)
    parts[std::string(report::part_name(static_cast<report::Part>(p)))] = o.breakdown[static_cast<std::size_t>(p)];
  j["breakdown"] = parts;
  if (!o.finding_rule.empty()) j["finding"] = {{"rule", o.finding_rule}, {"message", o.finding}};
  return j;
}

// Reads fields of one object, naming the file and the JSON path of what is wrong.
class Reader {
 public:
  Reader(const json& object, std::string name, std::string path)
      : j_(object), name_(std::move(name)), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "expected an object");
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(fmt::format("{}: {}{}: {}", name_, path_.empty() && key.empty() ? "/" : path_,
                                 key.empty() ? "" : "/" + key, what));
  }
  template <typename T>
  T get(const std::string& key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) fail(key, "missing");
    // No silent conversions: 0.7 is not an index, -1 not a count.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const bool fits = std::is_signed_v<T> ? it->is_number_integer() : it->is_number_unsigned();
      if (!fits) fail(key, fmt::format("expected {} integer, found {}", std::is_signed_v<T> ? "an" : "a non-negative", it->dump()));
    }
    try {
      return it->get<T>();
    } catch (const json::exception&) {
      fail(key, fmt::format("expected a {}, found {}", expected_name<T>(), it->dump()));
    }
  }
  template <typename T>
  std::optional<T> optional(const std::string& key) const {
    if (!j_.contains(key)) return std::nullopt;
    return get<T>(key);
  }
  std::string string_or_empty(const std::string& key) const { return optional<std::string>(key).value_or(""); }
  // A plan's figure as `trnsim sweep` writes it: a count of at least `least`, or a finite number
  // (above 0 where `positive`, else at least 0). A part edited by hand must not rank a plan at
  // -1 s.
  std::optional<std::int64_t> count_from(const std::string& key, std::int64_t least) const {
    const auto v = optional<std::int64_t>(key);
    if (v && *v < least) fail(key, fmt::format("expected an integer >= {}, found {}", least, *v));
    return v;
  }
  double figure(const std::string& key, bool positive) const {
    const double v = get<double>(key);
    if (!std::isfinite(v) || v < 0 || (positive && v == 0))
      fail(key, fmt::format("expected a finite number {} 0, found {}", positive ? ">" : ">=", v));
    return v;
  }

 private:
  template <typename T>
  static const char* expected_name() {
    if constexpr (std::is_same_v<T, std::string>) return "string";
    else if constexpr (std::is_same_v<T, bool>) return "boolean";
    else if constexpr (std::is_floating_point_v<T>) return "number";
    else if constexpr (std::is_integral_v<T>) return "integer";
    else return "list of strings";
  }
  const json& j_;
  std::string name_, path_;
};

PlanOutcome plan_from_json(const json& j, const std::string& name, const std::string& path) {
  const Reader r(j, name, path);
  PlanOutcome o;
  o.index = r.get<std::size_t>("index");
  o.vary = r.get<std::vector<std::string>>("vary");
  const std::string status = r.get<std::string>("status");
  if (status == status_name(PlanStatus::Simulated)) o.status = PlanStatus::Simulated;
  else if (status == status_name(PlanStatus::OutOfMemory)) o.status = PlanStatus::OutOfMemory;
  else if (status == status_name(PlanStatus::Invalid)) o.status = PlanStatus::Invalid;
  else if (status == status_name(PlanStatus::Pruned)) o.status = PlanStatus::Pruned;
  else r.fail("status", fmt::format("expected simulated, out_of_memory, invalid or pruned, found \"{}\"", status));
  o.reason = r.string_or_empty("reason");
  o.detail = r.string_or_empty("detail");
  o.tp = r.count_from("tp", 1);
  o.pp = r.count_from("pp", 1);
  o.dp = r.count_from("dp", 1);
  o.micro_batch = r.count_from("micro_batch", 1);
  o.virtual_stages = r.count_from("virtual_stages", 1);
  o.schedule = r.optional<std::string>("schedule");
  if (o.schedule && !parse_enum<workload::PipelineSchedule>(*o.schedule))
    r.fail("schedule", fmt::format("expected one of {}, found \"{}\"", fmt::join(enum_names<workload::PipelineSchedule>(), ", "), *o.schedule));
  o.recompute = r.optional<std::string>("recompute");
  if (o.recompute && !workload::parse_recompute(*o.recompute))
    r.fail("recompute", fmt::format("expected none, selective, selective-op, full or full-every-N, found \"{}\"", *o.recompute));
  o.zero = r.count_from("zero", 0);
  if (o.zero && *o.zero > 3) r.fail("zero", fmt::format("expected 0, 1, 2 or 3, found {}", *o.zero));
  o.sequence_parallel = r.optional<bool>("sequence_parallel");
  if (o.status == PlanStatus::Invalid) return o;
  o.peak_memory_bytes = r.figure("peak_memory_bytes", false);
  o.capacity_bytes = r.figure("capacity_bytes", false);
  o.lower_bound_s = r.optional<double>("lower_bound_s") ? r.figure("lower_bound_s", false) : 0;
  if (o.status == PlanStatus::OutOfMemory || o.status == PlanStatus::Pruned) return o;
  o.step_time_s = r.figure("step_time_s", true);
  o.tokens_per_s = r.figure("tokens_per_s", false);
  o.mfu = r.figure("mfu", false);
  const json breakdown = r.get<json>("breakdown");  // Reader keeps a reference: hold the value
  const Reader parts(breakdown, name, path + "/breakdown");
  for (int p = 0; p < report::kPartCount; ++p)
    o.breakdown[static_cast<std::size_t>(p)] =
        parts.get<double>(std::string(report::part_name(static_cast<report::Part>(p))));
  if (j.contains("finding")) {
    const json finding = r.get<json>("finding");
    const Reader f(finding, name, path + "/finding");
    o.finding_rule = f.get<std::string>("rule");
    o.finding = f.get<std::string>("message");
  }
  return o;
}

}  // namespace

json to_json(const PlanOutcome& outcome) { return plan_json(outcome); }

json to_json(const SweepResult& result) {
  const SweepSummary& s = result.summary;
  json plans = json::array();
  for (const PlanOutcome& o : result.outcomes) plans.push_back(plan_json(o));
  return json{{"kind", kSweepKind},         {"schema_version", kSweepSchemaVersion},
              {"experiment", s.experiment}, {"title", s.title},
              {"vary", s.vary_paths},  {"points", s.points},
              {"shard", s.shard},      {"shards", s.shards}, {"search", s.search},
              {"keep", s.keep},        {"definition", s.definition},
              {"plans", plans}};
}

SweepResult sweep_from_json(const json& document, const std::string& name) {
  const Reader r(document, name, "");
  if (r.get<std::string>("kind") != kSweepKind) r.fail("kind", fmt::format("expected \"{}\" (a trnsim sweep --json file)", kSweepKind));
  const int version = r.get<int>("schema_version");
  if (version != kSweepSchemaVersion)
    r.fail("schema_version", fmt::format("expected {}, found {}", kSweepSchemaVersion, version));
  SweepResult out;
  SweepSummary& s = out.summary;
  s.experiment = r.get<std::string>("experiment");
  s.title = r.get<std::string>("title");
  s.vary_paths = r.get<std::vector<std::string>>("vary");
  s.points = r.get<std::size_t>("points");
  s.shard = r.get<int>("shard");
  s.shards = r.get<int>("shards");
  s.search = r.get<bool>("search");
  if (s.shards < 1 || s.shard < 0 || s.shard >= s.shards)
    r.fail("shard", fmt::format("expected 0 <= shard < shards, found {} of {}", s.shard, s.shards));
  s.keep = r.get<std::size_t>("keep");
  s.definition = r.get<json>("definition");
  const json plans = r.get<json>("plans");
  if (!plans.is_array()) r.fail("plans", "expected an array");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    out.outcomes.push_back(plan_from_json(plans[i], name, fmt::format("/plans/{}", i)));
    if (out.outcomes.back().vary.size() != s.vary_paths.size())
      r.fail(fmt::format("plans/{}/vary", i), fmt::format("expected {} values (one per --vary path), found {}",
                                                          s.vary_paths.size(), out.outcomes.back().vary.size()));
    const std::size_t index = out.outcomes.back().index;
    const bool in_shard = index < s.points && index % static_cast<std::size_t>(s.shards) == static_cast<std::size_t>(s.shard);
    const bool ascending = i == 0 || out.outcomes[i - 1].index < index;
    if (!in_shard || !ascending)
      r.fail(fmt::format("plans/{}/index", i),
             fmt::format("{} is not the next point of shard {}/{} of {} points", index, s.shard, s.shards, s.points));
  }
  const std::size_t expected = s.points > static_cast<std::size_t>(s.shard)
                                   ? (s.points - static_cast<std::size_t>(s.shard) + static_cast<std::size_t>(s.shards) - 1) /
                                         static_cast<std::size_t>(s.shards)
                                   : 0;
  if (out.outcomes.size() != expected)
    r.fail("plans", fmt::format("expected the {} points of shard {}/{}, found {}", expected, s.shard, s.shards,
                                out.outcomes.size()));
  return out;
}

namespace {

// Where a part's summary first differs from the first part's, as "/path: this against that", or
// "" where they agree. Within the definition, the first change json::diff finds.
std::string first_difference(const SweepSummary& s, const SweepSummary& first) {
  const auto quoted = [](const json& v) {
    std::string text = v.dump();
    return text.size() > 60 ? text.substr(0, 40) + "..." : text;
  };
  if (s.experiment != first.experiment) return fmt::format("/experiment: {} against {}", quoted(s.experiment), quoted(first.experiment));
  if (s.title != first.title) return fmt::format("/title: {} against {}", quoted(s.title), quoted(first.title));
  if (s.points != first.points) return fmt::format("/points: {} against {}", s.points, first.points);
  if (s.shards != first.shards) return fmt::format("/shards: {} against {}", s.shards, first.shards);
  if (s.definition == first.definition) return "";
  const json patch = json::diff(first.definition, s.definition);
  json::json_pointer at(patch.at(0).at("path").get<std::string>());
  // A list that grew or shrank: its element ("-" when appended) is in one part only, the list in both.
  if (!at.empty() && (!first.definition.contains(at) || !s.definition.contains(at))) at = at.parent_pointer();
  const auto value_in = [&at, &quoted](const json& d) { return d.contains(at) ? quoted(d.at(at)) : std::string("nothing"); };
  return fmt::format("/definition{}: {} against {}", at.to_string(), value_in(s.definition), value_in(first.definition));
}

}  // namespace

SweepResult merge_shards(std::vector<SweepResult> parts, const std::vector<std::string>& names) {
  if (parts.empty()) throw InputError("merge: expected at least one part");
  const SweepSummary& first = parts.front().summary;
  // Shard ids sorted, without a table of `shards` entries (a part may claim any count).
  std::vector<std::pair<int, std::size_t>> ids;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const SweepSummary& s = parts[k].summary;
    const std::string differs = first_difference(s, first);
    if (!differs.empty())
      throw InputError(fmt::format("{}: not a shard of the same sweep as {}: {} (the experiment file and its content, "
                                   "the plan lists, --set, --vary, --search and the shard count must agree)",
                                   names[k], names.front(), differs));
    ids.emplace_back(s.shard, k);
  }
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0 && ids[i].first == ids[i - 1].first)
      throw InputError(fmt::format("{}: shard {}/{} is also in {}", names[ids[i].second], ids[i].first, first.shards,
                                   names[ids[i - 1].second]));
    if (ids[i].first != static_cast<int>(i))
      throw InputError(fmt::format("merge: shard {}/{} is missing", i, first.shards));
  }
  if (ids.size() != static_cast<std::size_t>(first.shards))
    throw InputError(fmt::format("merge: shard {}/{} is missing", ids.size(), first.shards));

  SweepResult out;
  out.summary = first;
  out.summary.shard = 0;
  out.summary.shards = 1;
  for (SweepResult& p : parts)
    for (PlanOutcome& o : p.outcomes) out.outcomes.push_back(std::move(o));
  std::sort(out.outcomes.begin(), out.outcomes.end(),
            [](const PlanOutcome& a, const PlanOutcome& b) { return a.index < b.index; });
  return out;
}

}  // namespace trnsim::explore
