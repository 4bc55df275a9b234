// Software objects (configs/software/*.json, an experiment's "software") -> workload::SoftwareSpec,
// and the collective libraries they name (configs/collectives/*.json) -> net::CollectivePolicy.
#include <limits>

#include <fmt/core.h>

#include "parse.hpp"
#include "trnsim/config/enums.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"

namespace trnsim::config::detail {
namespace {

using workload::DpReduction;
using workload::PlanDefaults;
using workload::PrecisionRecipe;

const std::vector<std::string_view>& dp_reduction_names() {
  static const std::vector<std::string_view> names{"overlapped", "after-backward"};
  return names;
}
const std::vector<std::string_view>& autocast_names() {
  static const std::vector<std::string_view> names{"none", "matmult", "all"};
  return names;
}
// Storage formats of the training state; "none" only where a copy may be absent.
const std::vector<std::string_view>& storage_names() {
  static const std::vector<std::string_view> names{"fp32", "tf32", "bf16", "fp16", "fp8", "none"};
  return names;
}
constexpr double kStorageBytes[] = {4, 4, 2, 2, 1, 0};
std::string_view storage_name(double bytes, bool fp8_allowed) {
  if (bytes == 4) return "fp32";
  if (bytes == 2) return "bf16";
  if (bytes == 1 && fp8_allowed) return "fp8";
  return "none";
}

double storage(ObjectReader& r, std::string_view key, bool none_allowed) {
  const std::size_t i = r.choice(key, storage_names());
  if (!none_allowed && storage_names()[i] == "none") r.fail_at(key, "expected a format, found \"none\"");
  return kStorageBytes[i];
}

// The plan fields a preset or recipe may state; absent or null = not stated.
void read_plan_fields(ObjectReader& r, PlanDefaults& d) {
  d.micro_batch = r.optional_integer("micro_batch", 1, 1 << 20);
  d.sequence_parallel = r.optional_boolean("sequence_parallel");
  if (const auto zero = r.optional_integer("zero", 0)) {
    if (*zero > 1) r.fail_at("zero", fmt::format("expected 0 or 1 (ZeRO-1), found {}", *zero));
    d.zero = static_cast<int>(*zero);
  }
  if (const auto s = r.optional_choice("schedule", names_of<workload::PipelineSchedule>()))
    d.schedule = static_cast<workload::PipelineSchedule>(*s);
  d.virtual_stages = r.optional_integer("virtual_stages", 1, 1 << 20);
  if (const auto rc = r.optional_choice("recompute", names_of<workload::Recompute>()))
    d.recompute = static_cast<workload::Recompute>(*rc);
  if (const auto a = r.optional_choice("attention", names_of<hw::AttentionKernel>()))
    d.attention = static_cast<hw::AttentionKernel>(*a);
}

template <class E>
json optional_name(const std::optional<E>& v) {
  return v ? json(to_string(*v)) : json(nullptr);
}
template <class T>
json optional_value(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json plan_fields_json(const PlanDefaults& d) {
  return json{{"micro_batch", optional_value(d.micro_batch)},
              {"sequence_parallel", optional_value(d.sequence_parallel)},
              {"zero", optional_value(d.zero)},
              {"schedule", optional_name(d.schedule)},
              {"virtual_stages", optional_value(d.virtual_stages)},
              {"recompute", optional_name(d.recompute)},
              {"attention", optional_name(d.attention)}};
}

PrecisionRecipe parse_recipe(ObjectReader r) {
  r.documentation();
  PrecisionRecipe p;
  p.weights = storage(r, "weights", false);
  p.gradients = storage(r, "gradients", false);
  p.grad_accumulation = storage(r, "grad_accumulation", false);
  p.master_weights = storage(r, "master_weights", true);
  p.optimizer_states = storage(r, "optimizer_states", false);
  p.stochastic_rounding = r.boolean_or("stochastic_rounding", false);
  p.fp32_autocast = static_cast<PrecisionRecipe::AutoCast>(r.optional_choice("fp32_autocast", autocast_names()).value_or(0));
  p.autocast_type = static_cast<hw::Dtype>(
      r.optional_choice("autocast_type", names_of<hw::Dtype>()).value_or(static_cast<std::size_t>(hw::Dtype::Bf16)));
  r.finish();
  return p;
}

json recipe_json(const PrecisionRecipe& p) {
  return json{{"weights", storage_name(p.weights, true)},
              {"gradients", storage_name(p.gradients, true)},
              {"grad_accumulation", storage_name(p.grad_accumulation, true)},
              {"master_weights", storage_name(p.master_weights, false)},
              {"optimizer_states", storage_name(p.optimizer_states, true)},
              {"stochastic_rounding", p.stochastic_rounding},
              {"fp32_autocast", autocast_names().at(static_cast<std::size_t>(p.fp32_autocast))},
              {"autocast_type", to_string(p.autocast_type)}};
}

net::CollectivePolicy parse_library(const json& document, const std::string& file) {
  ObjectReader r(document, file, "");
  r.documentation();
  net::CollectivePolicy policy;
  policy.library = r.string("name");
  policy.source = r.source();
  const json* rules = r.raw("rules");
  if (rules == nullptr || !rules->is_array()) r.fail_at("rules", "expected an array of rules");
  for (std::size_t i = 0; i < rules->size(); ++i) {
    ObjectReader rule((*rules)[i], file, fmt::format("/rules/{}", i));
    net::AlgorithmRule a;
    const std::string op = rule.string("op");
    try {
      a.op = net::parse_op(op);
      a.within_instance = net::parse_algorithm(rule.string("within_instance"));
      a.across_instances = net::parse_algorithm(rule.string("across_instances"));
    } catch (const trnsim::InputError& e) {
      rule.fail_at("op", e.what());
    }
    a.max_bytes = rule.number_or("max_bytes", std::numeric_limits<double>::infinity(), 1, 1e18);
    if (!policy.rules.empty() && policy.rules.back().op == a.op && a.max_bytes <= policy.rules.back().max_bytes)
      rule.fail_at("max_bytes", "expected sizes ascending within one op");
    rule.finish();
    policy.rules.push_back(a);
  }
  r.finish();
  return policy;
}

}  // namespace

workload::SoftwareSpec parse_software(ObjectReader r) {
  r.documentation();
  workload::SoftwareSpec s;
  s.name = r.string("preset");
  s.source = r.source();
  if (auto d = r.optional_object("defaults")) {
    d->documentation();
    read_plan_fields(*d, s.defaults);
    d->finish();
  }
  if (const json* recipes = r.raw("recipes")) {
    if (!recipes->is_array()) r.fail_at("recipes", "expected an array of {\"model\": NAME, plan fields...}");
    for (std::size_t i = 0; i < recipes->size(); ++i) {
      ObjectReader rr((*recipes)[i], r.file(), fmt::format("{}/{}", r.path_of("recipes"), i));
      rr.documentation();
      workload::Recipe recipe;
      recipe.model = rr.string("model");
      recipe.source = rr.source();
      read_plan_fields(rr, recipe.defaults);
      rr.finish();
      s.recipes.push_back(std::move(recipe));
    }
  }
  if (auto p = r.optional_object("precision")) {
    p->documentation();
    for (std::size_t i = 0; i < names_of<workload::Precision>().size(); ++i) {
      const std::string_view dtype = names_of<workload::Precision>()[i];
      if (auto entry = p->optional_object(dtype))
        s.precision.push_back({static_cast<workload::Precision>(i), parse_recipe(*entry)});
    }
    p->finish();
  }
  ObjectReader k = r.object("kernels");
  k.documentation();
  s.kernels.attention = static_cast<hw::AttentionKernel>(k.choice("attention", names_of<hw::AttentionKernel>()));
  s.kernels.fused_softmax = k.boolean_or("fused_softmax", true);
  s.kernels.fused_bias_activation = k.boolean_or("fused_bias_activation", true);
  s.kernels.fused_dropout_add = k.boolean_or("fused_dropout_add", true);
  s.kernels.fused_grad_accumulation = k.boolean_or("fused_grad_accumulation", false);
  k.finish();
  ObjectReader o = r.object("overlap");
  o.documentation();
  s.overlap.dp_reduction = static_cast<DpReduction>(o.choice("dp_reduction", dp_reduction_names()));
  s.overlap.tp_comm = o.boolean_or("tp_comm", false);
  o.finish();
  s.kv_replication = r.boolean_or("kv_replication", true);
  ObjectReader c = r.object("collectives");
  c.documentation();
  const std::string library = c.string("library");
  std::string library_file;
  const json library_doc = read_collectives_json(library, &library_file);
  s.collectives = parse_library(library_doc, library_file);
  s.collectives.optimal = c.boolean_or("optimal", false);
  c.finish();
  return s;
}

json to_json(const workload::SoftwareSpec& s) {
  json precision = json::object();
  for (const auto& e : s.precision) precision[std::string(to_string(e.dtype))] = recipe_json(e.recipe);
  json recipes = json::array();
  for (const auto& r : s.recipes) {
    json j = plan_fields_json(r.defaults);
    j["model"] = r.model;
    recipes.push_back(std::move(j));
  }
  return json{{"preset", s.name},
              {"defaults", plan_fields_json(s.defaults)},
              {"recipes", recipes},
              {"precision", precision},
              {"kernels",
               {{"attention", to_string(s.kernels.attention)},
                {"fused_softmax", s.kernels.fused_softmax},
                {"fused_bias_activation", s.kernels.fused_bias_activation},
                {"fused_dropout_add", s.kernels.fused_dropout_add},
                {"fused_grad_accumulation", s.kernels.fused_grad_accumulation}}},
              {"overlap",
               {{"dp_reduction", dp_reduction_names().at(static_cast<std::size_t>(s.overlap.dp_reduction))},
                {"tp_comm", s.overlap.tp_comm}}},
              {"kv_replication", s.kv_replication},
              {"collectives", {{"library", s.collectives.library}, {"optimal", s.collectives.optimal}}}};
}

}  // namespace trnsim::config::detail
