// The field tables of the software specs (include/trnsim/workload/software.hpp): a software
// preset (configs/software/*.json, or an experiment's "software" object expanded over it) and the
// collective library it names (configs/collectives/*.json -> net::CollectivePolicy).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "field_table.hpp"
#include "parse.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/units.hpp"

namespace trnsim::config::detail {
namespace {

using workload::Kernels;
using workload::Overlap;
using workload::PlanDefaults;
using workload::PrecisionRecipe;
using workload::Recipe;
using workload::SoftwareSpec;

// What a stack fills in for unset plan fields; absent or null: the stack does not say.
constexpr Field<PlanDefaults> kPlanDefaultsFields[] = {
    documentation<PlanDefaults>(),
    integer<&PlanDefaults::micro_batch>("micro_batch", kDegree, "sequences per micro-batch"),
    value<&PlanDefaults::sequence_parallel>("sequence_parallel", "sequence parallelism with tp"),
    integer<&PlanDefaults::zero>("zero", {0, 3}, "ZeRO stage (0 to 3; 3 = FSDP)"),
    value<&PlanDefaults::schedule>("schedule", "gpipe, 1f1b or 1f1b-interleaved"),
    integer<&PlanDefaults::virtual_stages>("virtual_stages", kDegree, "interleaved model chunks per rank"),
    value<&PlanDefaults::recompute>("recompute", "none, selective, selective-op, full or full-every-N (N 2 to 2^20)"),
    value<&PlanDefaults::attention>("attention", "flash or materialized"),
};

// The plan fields of a struct that holds a PlanDefaults as `M`, read from and written to the
// same JSON object (a recipe's "model" sits beside its fields).
template <auto M, class S>
constexpr Field<S> plan_fields() {
  return {.read = [](const Field<S>&, ObjectReader& r, S& s) { read_fields<PlanDefaults>(r, s.*M, kPlanDefaultsFields); },
          .write = [](const Field<S>&, const S& s, json& out) {
            out.update(write_fields<PlanDefaults>(s.*M, kPlanDefaultsFields));
          }};
}

constexpr Field<Recipe> kRecipeFields[] = {
    documentation<Recipe>(),
    source<&Recipe::source>(),
    value<&Recipe::model>("model", "the model name the recipe is for"),
    plan_fields<&Recipe::defaults, Recipe>(),
};

constexpr Field<PrecisionRecipe> kPrecisionFields[] = {
    documentation<PrecisionRecipe>(),
    value<&PrecisionRecipe::weights>("weights", "format of the weights forward and backward read"),
    value<&PrecisionRecipe::gradients>("gradients", "format of the gradients as produced and reduced"),
    value<&PrecisionRecipe::grad_accumulation>("grad_accumulation", "format of the gradient accumulation buffer"),
    value<&PrecisionRecipe::master_weights>("master_weights", "format of the optimizer's master copy (none: no copy)"),
    value<&PrecisionRecipe::optimizer_states>("optimizer_states", "format of each optimizer moment"),
    value<&PrecisionRecipe::stochastic_rounding>("stochastic_rounding", "rounding of the low-precision updates")
        .or_default(false),
    value<&PrecisionRecipe::fp32_autocast>("fp32_autocast", "Neuron --auto-cast: none, matmult or all")
        .or_default(workload::AutoCast::None),
    value<&PrecisionRecipe::autocast_type>("autocast_type", "Neuron --auto-cast-type").or_default(hw::Dtype::Bf16),
};

constexpr Field<Kernels> kKernelsFields[] = {
    documentation<Kernels>(),
    value<&Kernels::attention>("attention", "flash or materialized"),
    value<&Kernels::fused_softmax>("fused_softmax", "scale, mask and softmax in one kernel").or_default(true),
    value<&Kernels::fused_bias_activation>("fused_bias_activation", "bias and GeLU in one kernel").or_default(true),
    value<&Kernels::fused_dropout_add>("fused_dropout_add", "bias, dropout and residual add in one kernel")
        .or_default(true),
    value<&Kernels::fused_grad_accumulation>("fused_grad_accumulation",
                                             "gradient accumulation inside the weight-gradient GEMM")
        .or_default(false),
};

constexpr Field<Overlap> kOverlapFields[] = {
    documentation<Overlap>(),
    value<&Overlap::dp_reduction>("dp_reduction", "overlapped (during the backward) or after-backward"),
    value<&Overlap::tp_comm>("tp_comm", "the backward's tensor-parallel collectives overlap the GEMMs beside them: the stored input's all-gather the input-gradient GEMM, the input gradient's reduce-scatter (all-reduce) the weight-gradient GEMM").or_default(false),
};

// recipes: an array of recipe objects.
Field<SoftwareSpec> recipes_row() {
  return {.key = "recipes",
          .doc = "per-model recipes: {\"model\": NAME, plan fields...}",
          .read = [](const Field<SoftwareSpec>&, ObjectReader& r, SoftwareSpec& s) {
            const json* list = r.raw("recipes");
            if (list == nullptr || list->is_null()) return;
            if (!list->is_array()) r.fail_at("recipes", "expected an array of recipes, found " + describe(*list));
            for (std::size_t i = 0; i < list->size(); ++i)
              s.recipes.push_back(read_struct<Recipe>(
                  ObjectReader((*list)[i], r.file(), child_path(r.path_of("recipes"), std::to_string(i))), kRecipeFields));
          },
          .write = [](const Field<SoftwareSpec>&, const SoftwareSpec& s, json& out) {
            json list = json::array();
            for (const Recipe& recipe : s.recipes) list.push_back(write_fields<Recipe>(recipe, kRecipeFields));
            out["recipes"] = std::move(list);
          }};
}

// precision: an object keyed by training dtype, one recipe each.
Field<SoftwareSpec> precision_row() {
  return {.key = "precision",
          .doc = "per training dtype: the stack's storage formats",
          .read = [](const Field<SoftwareSpec>&, ObjectReader& r, SoftwareSpec& s) {
            if (!r.has("precision")) {
              (void)r.raw("precision");
              return;
            }
            ObjectReader p = r.object("precision");
            p.documentation();
            for (const auto& entry : enum_table(workload::Precision{})) {
              if (!p.has(entry.name)) continue;
              s.precision.push_back({entry.value, read_struct<PrecisionRecipe>(p.object(entry.name), kPrecisionFields)});
            }
            p.finish();
          },
          .write = [](const Field<SoftwareSpec>&, const SoftwareSpec& s, json& out) {
            json p = json::object();
            for (const auto& e : s.precision)
              p[std::string(trnsim::to_string(e.dtype))] = write_fields<PrecisionRecipe>(e.recipe, kPrecisionFields);
            out["precision"] = std::move(p);
          }};
}

// One rule of a collective library file.
net::AlgorithmRule read_rule(ObjectReader r) {
  r.documentation();
  net::AlgorithmRule a;
  auto named = [&r](std::string_view key, auto parse) {
    const std::string text = r.string(key);  // its own errors name the file and path already
    try {
      return parse(text);
    } catch (const InputError& e) {
      r.fail_at(key, e.what());
    }
  };
  a.op = named("op", [](const std::string& t) { return net::parse_op(t); });
  // A rule names what the library runs: auto and optimal would refer back to the rules or to no library.
  const auto concrete = [](const std::string& t) {
    const net::Algorithm algorithm = net::parse_algorithm(t);
    if (std::find(std::begin(net::kConcreteAlgorithms), std::end(net::kConcreteAlgorithms), algorithm) ==
        std::end(net::kConcreteAlgorithms)) {
      std::vector<std::string_view> names;
      for (const net::Algorithm runs : net::kConcreteAlgorithms) names.push_back(trnsim::to_string(runs));
      throw InputError(fmt::format("expected an algorithm the library runs ({}), found \"{}\"", fmt::join(names, ", "), t));
    }
    return algorithm;
  };
  a.within_instance = named("within_instance", concrete);
  a.across_instances = named("across_instances", concrete);
  a.max_bytes = r.has("max_bytes") ? r.number("max_bytes", {1, 1e18}) : std::numeric_limits<double>::infinity();
  if (std::isfinite(a.max_bytes) && a.max_bytes != std::floor(a.max_bytes))
    r.fail_at("max_bytes", fmt::format("expected a whole number of bytes, found {}", a.max_bytes));
  (void)r.raw("max_bytes");
  r.finish();
  return a;
}

// One runtime release of a collective library file.
net::RuntimeRelease read_release(ObjectReader r) {
  r.documentation();
  net::RuntimeRelease rel;
  rel.name = r.string("name");
  rel.source = r.source();
  rel.launch_s = r.number("launch_us", {0, 1e6}) * units::kMicro;
  rel.step_s = r.number("step_us", {0, 1e6}) * units::kMicro;
  rel.message_s = r.number("message_us", {0, 1e6}) * units::kMicro;
  rel.stream_efficiency = r.number("stream_efficiency", {1e-3, 1});
  r.finish();
  return rel;
}

net::CollectivePolicy read_library(const std::string& name) {
  std::string file;
  const json document = read_collectives_json(name, &file);
  return parse_collectives(document, file);
}

}  // namespace

net::CollectivePolicy parse_collectives(const json& document, const std::string& file) {
  ObjectReader r(document, file, "");
  r.documentation();
  net::CollectivePolicy policy;
  policy.library = r.string("name");
  policy.source = r.source();
  const json* rules = r.raw("rules");
  if (rules == nullptr || !rules->is_array()) r.fail_at("rules", "expected an array of rules");
  for (std::size_t i = 0; i < rules->size(); ++i) {
    const std::string path = child_path("/rules", std::to_string(i));
    net::AlgorithmRule a = read_rule(ObjectReader((*rules)[i], file, path));
    if (!policy.rules.empty() && policy.rules.back().op == a.op && a.max_bytes <= policy.rules.back().max_bytes)
      fail(file, child_path(path, "max_bytes"), "expected sizes ascending within one op");
    policy.rules.push_back(a);
  }
  if (const json* releases = r.raw("releases"); releases != nullptr) {
    if (!releases->is_array() || releases->empty()) r.fail_at("releases", "expected a non-empty array of runtime releases");
    for (std::size_t i = 0; i < releases->size(); ++i) {
      const std::string path = child_path("/releases", std::to_string(i));
      net::RuntimeRelease rel = read_release(ObjectReader((*releases)[i], file, path));
      for (const net::RuntimeRelease& other : policy.releases)
        if (other.name == rel.name) fail(file, child_path(path, "name"), fmt::format("release \"{}\" given twice", rel.name));
      policy.releases.push_back(std::move(rel));
    }
  }
  r.finish();
  return policy;
}

namespace {

// collectives: {"library": NAME (configs/collectives/NAME.json), "optimal": false}.
Field<SoftwareSpec> collectives_row() {
  return {.key = "collectives",
          .doc = "the collective library and whether to take the analytic optimum instead (what-if)",
          .read = [](const Field<SoftwareSpec>&, ObjectReader& r, SoftwareSpec& s) {
            ObjectReader c = r.object("collectives");
            c.documentation();
            const std::string library = c.string("library");
            try {
              s.collectives = read_library(library);
            } catch (const InputError& e) {
              c.fail_at("library", e.what());
            }
            s.collectives.optimal = c.has("optimal") && c.boolean("optimal");
            (void)c.raw("optimal");
            // A library with runtime releases is run at one of them: the software names it.
            const std::vector<std::string> known = s.collectives.release_names();
            if (c.has("release")) {
              // A version read as a number would lose its digits (2.10 is 2.1): it must be a string.
              if (const json* v = c.raw("release"); v != nullptr && v->is_number())
                c.fail_at("release", fmt::format("expected a release name as a string (\"{}\"; on the command line "
                                                 "--set 'software.collectives.release=\"{}\"'), found the number {}",
                                                 v->dump(), v->dump(), v->dump()));
              s.collectives.release = c.string("release");
              if (s.collectives.runtime() == nullptr)
                c.fail_at("release", known.empty()
                                         ? fmt::format("library {} has no runtime releases, found \"{}\"",
                                                       s.collectives.library, s.collectives.release)
                                         : fmt::format("expected a release of library {} ({}), found \"{}\"",
                                                       s.collectives.library, fmt::join(known, ", "),
                                                       s.collectives.release));
            } else if (!known.empty()) {
              c.fail_at("release", fmt::format("missing: library {} needs the runtime release the software runs ({})",
                                               s.collectives.library, fmt::join(known, ", ")));
            }
            (void)c.raw("release");
            c.finish();
          },
          .write = [](const Field<SoftwareSpec>&, const SoftwareSpec& s, json& out) {
            json c{{"library", s.collectives.library}, {"optimal", s.collectives.optimal}};
            if (!s.collectives.release.empty()) c["release"] = s.collectives.release;
            out["collectives"] = std::move(c);
          }};
}

// fsdp_prefetch_units: an integer 0 .. 2^20, or "memory" (as many layers ahead as memory allows,
// chosen by the plan rule). Absent or null: FSDP2's 1; written back only when it differs.
Field<SoftwareSpec> fsdp_prefetch_row() {
  return {.key = "fsdp_prefetch_units",
          .doc = "FSDP: layers whose all-gather runs ahead of the computing one, or \"memory\" (as many as fit)",
          // Optional with a test: left out of the resolved experiment at 1, yet --set may add it.
          .need = Need::Optional,
          .written = [](const SoftwareSpec& s) { return s.fsdp_prefetch_units != 1; },
          .read = [](const Field<SoftwareSpec>&, ObjectReader& r, SoftwareSpec& s) {
            const json* v = r.raw("fsdp_prefetch_units");
            if (v == nullptr || v->is_null()) return;
            if (v->is_string() && v->get<std::string>() == "memory") {
              s.fsdp_prefetch_units = workload::kPrefetchAsMemoryAllows;
              return;
            }
            if (!v->is_number_integer() || v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > (1 << 20))
              r.fail_at("fsdp_prefetch_units",
                        "expected an integer in [0, 1048576] or \"memory\", found " + describe(*v));
            s.fsdp_prefetch_units = v->get<std::int64_t>();
          },
          .write = [](const Field<SoftwareSpec>&, const SoftwareSpec& s, json& out) {
            if (s.fsdp_prefetch_units == 1) return;
            if (s.fsdp_prefetch_units == workload::kPrefetchAsMemoryAllows) out["fsdp_prefetch_units"] = "memory";
            else out["fsdp_prefetch_units"] = s.fsdp_prefetch_units;
          }};
}

const Field<SoftwareSpec> kSoftwareFields[] = {
    documentation<SoftwareSpec>(),
    source<&SoftwareSpec::source>(),
    value<&SoftwareSpec::name>("preset", "the software preset (configs/software/NAME.json)"),
    object<&SoftwareSpec::defaults, kPlanDefaultsFields>("defaults", "plan fields the stack fills in")
        .optional([](const SoftwareSpec&) { return true; }),
    recipes_row(),
    precision_row(),
    object<&SoftwareSpec::kernels, kKernelsFields>("kernels", "which kernels the stack runs"),
    object<&SoftwareSpec::overlap, kOverlapFields>("overlap", "what overlaps with what"),
    value<&SoftwareSpec::kv_replication>("kv_replication", "KV heads replicated when tp exceeds them").or_default(true),
    value<&SoftwareSpec::moe_pad_to_capacity>("moe_pad_to_capacity",
                                              "MoE under a capacity factor: experts padded to capacity (else tokens dropped)")
        .optional([](const SoftwareSpec& s) { return s.moe_pad_to_capacity; }),
    value<&SoftwareSpec::cp_attention>("cp_attention", "context parallelism's K/V exchange: ring or allgather")
        .optional([](const SoftwareSpec& s) { return s.cp_attention != workload::CpAttention::Ring; }),
    fsdp_prefetch_row(),
    collectives_row(),
};

}  // namespace

workload::SoftwareSpec parse_software(ObjectReader r) { return read_struct<SoftwareSpec>(std::move(r), kSoftwareFields); }

json to_json(const workload::SoftwareSpec& software) { return write_fields<SoftwareSpec>(software, kSoftwareFields); }

bool omitted_at_default(std::string_view path, std::string_view key) {
  if (path == "/software") return written_only_when_set<SoftwareSpec>(kSoftwareFields, key);
  return workload_omitted_at_default(path, key);
}

}  // namespace trnsim::config::detail
