// The rule for unset fields (contract in plan_rule.hpp).
#include "trnsim/replay/plan_rule.hpp"

#include <optional>
#include <string>

#include <fmt/core.h>

#include "trnsim/enum_names.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/memory.hpp"

namespace trnsim::replay {
namespace {

using workload::PipelineSchedule;
using workload::PlanDefaults;
using workload::Recompute;

class Resolver {
 public:
  explicit Resolver(const StepInput& input)
      : in_(input), recipe_(input.software.recipe_for(input.model.name)) {}

  // The value of one field by steps 2 and 3, with the rule's words; nullopt: step 4 decides.
  template <class T>
  std::optional<T> stated(std::optional<T> PlanDefaults::*field, std::string& rule) const {
    if (recipe_ != nullptr && (recipe_->defaults.*field)) {
      rule = fmt::format("software {}, recipe for {}", in_.software.name, recipe_->model);
      return recipe_->defaults.*field;
    }
    if (in_.software.defaults.*field) {
      rule = fmt::format("software {} default", in_.software.name);
      return in_.software.defaults.*field;
    }
    return std::nullopt;
  }

  workload::ResolvedPlan run() {
    // GQA with tp above the KV heads needs the stack to replicate them (NeuronX Distributed's
    // kv_replicator); a stack that does not cannot run the plan.
    const std::int64_t kv = in_.model.kv_heads > 0 ? in_.model.kv_heads : in_.model.heads;
    if (!in_.software.kv_replication && in_.parallelism.tp > kv) {
      throw InputError(fmt::format("/parallelism/tp: {} exceeds kv_heads ({}), and software {} does not replicate "
                                   "KV heads (kv_replication false): expected tp <= {}",
                                   in_.parallelism.tp, kv, in_.software.name, kv),
                       "tp exceeds kv_heads and the software does not replicate KV heads");
    }
    workload::ResolvedPlan out{in_.training, in_.parallelism, {}};
    auto& t = out.training;
    auto& p = out.parallelism;
    std::string rule;
    const std::string plainest = "plainest plan that fits";

    if (!t.micro_batch) {
      t.micro_batch = stated(&PlanDefaults::micro_batch, rule).value_or(1);
      if (!stated(&PlanDefaults::micro_batch, rule)) rule = plainest;
      note("/training/micro_batch", fmt::format("{}", *t.micro_batch), rule);
    }
    if (!p.sequence_parallel) {
      const auto s = stated(&PlanDefaults::sequence_parallel, rule);
      const bool possible = p.tp > 1 && in_.training.seq_len % p.tp == 0;
      // A mixture of experts with tp > 1 needs it (workload::check_plan): on whatever the stack says.
      const bool moe_needs = in_.model.is_moe() && p.tp > 1;
      p.sequence_parallel = (s.value_or(false) || moe_needs) && possible;
      if (moe_needs) rule = "a mixture-of-experts model with tp > 1 needs it (Megatron-Core's token dispatcher)";
      else if (!s) rule = plainest;
      else if (*s && !possible) rule += "; off: it needs tp > 1 dividing seq_len";
      note("/parallelism/sequence_parallel", *p.sequence_parallel ? "true" : "false", rule);
    }
    if (!p.zero) {
      const auto s = stated(&PlanDefaults::zero, rule);
      // The shards span dp x cp (CP ranks hold the same parameters).
      p.zero = p.dp * p.cp > 1 ? s.value_or(0) : 0;
      if (!s) rule = plainest;
      else if (*s > 0 && p.dp * p.cp == 1) rule += "; 0: dp = 1 has nothing to shard";
      note("/parallelism/zero", fmt::format("{}", *p.zero), rule);
    }
    if (!p.virtual_stages) {
      const auto s = stated(&PlanDefaults::virtual_stages, rule);
      if (s) {
        p.virtual_stages = *s;
      } else {
        rule = plainest;
        p.virtual_stages = p.schedule == PipelineSchedule::Interleaved ? smallest_interleaving() : 1;
        if (p.schedule == PipelineSchedule::Interleaved) rule += ": the smallest interleaving the plan allows";
      }
      note("/parallelism/virtual_stages", fmt::format("{}", *p.virtual_stages), rule);
    }
    if (!p.schedule) {
      const auto s = stated(&PlanDefaults::schedule, rule);
      p.schedule = s.value_or(*p.virtual_stages > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB);
      if (!s) rule = plainest + "; 1f1b-interleaved exactly when virtual_stages > 1";
      note("/parallelism/schedule", std::string(trnsim::to_string(*p.schedule)), rule);
    }
    if (!t.attention) {
      const auto s = stated(&PlanDefaults::attention, rule);
      t.attention = s.value_or(in_.software.kernels.attention);
      if (!s) rule = fmt::format("software {} kernels", in_.software.name);
      note("/training/attention", std::string(trnsim::to_string(*t.attention)), rule);
    }
    if (!p.recompute) {
      const auto s = stated(&PlanDefaults::recompute, rule);
      if (s) {
        p.recompute = *s;
      } else {
        p.recompute = lightest_fitting(out, rule);
      }
      note("/parallelism/recompute", workload::recompute_text(*p.recompute), rule);
    }
    if (in_.software.fsdp_prefetch_units == workload::kPrefetchAsMemoryAllows && p.zero && *p.zero == 3 &&
        !p.fsdp_prefetch) {
      p.fsdp_prefetch = deepest_prefetch(out, rule);
      note("/software/fsdp_prefetch_units", fmt::format("{}", *p.fsdp_prefetch), rule);
    }
    out.choices = std::move(choices_);
    return out;
  }

 private:
  void note(const char* path, const std::string& value, const std::string& rule) {
    choices_.push_back(fmt::format("{} = {} (rule: {})", path, value, rule));
  }

  // Megatron-LM's interleaving needs pp > 1, the layers split evenly over the pipeline stages and
  // each stage's layers evenly over its v chunks (num-layers-per-virtual-pipeline-stage), and the
  // micro-batches per pipeline a multiple of pp: the smallest v >= 2 dividing layers / pp. Layers
  // that do not split evenly over pp (trnsim's uneven split, plan.hpp) take v = 2; make_plan names
  // whatever else fails.
  std::int64_t smallest_interleaving() const {
    const std::int64_t layers = in_.model.layers, pp = in_.parallelism.pp;
    if (pp < 1 || layers % pp != 0) return 2;
    const std::int64_t per_stage = layers / pp;
    for (std::int64_t v = 2; v <= per_stage; ++v) {
      if (per_stage % v == 0) return v;
    }
    return 2;
  }

  // The first recompute mode, in order none, selective, full, whose memory fits.
  Recompute lightest_fitting(const workload::ResolvedPlan& plan, std::string& rule) const {
    const double capacity = rank_memory_capacity(in_.cluster);
    for (const Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      workload::ParallelismSpec p = plan.parallelism;
      p.recompute = r;
      const double need = workload::estimate_memory(in_.model, plan.training, p, in_.software).peak().total();
      if (need <= capacity) {
        rule = "plainest plan that fits: the least recomputation whose memory fits";
        return r;
      }
    }
    rule = "plainest plan that fits: none fits, full recomputation (see the out-of-memory finding)";
    return Recompute::Full;
  }

  // Software fsdp_prefetch_units "memory" (SimpleFSDP compiled: the compiler schedules the
  // gathers; assumption: as many layers ahead as memory allows): the largest k in 0 .. the
  // largest chunk's layers (a pass's gathers, beyond which more prefetch holds nothing more)
  // whose memory estimate fits the rank's HBM; memory grows with k, so a bisection finds it.
  std::int64_t deepest_prefetch(const workload::ResolvedPlan& plan, std::string& rule) const {
    const double capacity = rank_memory_capacity(in_.cluster);
    const auto& par = plan.parallelism;
    const std::int64_t chunks = par.pp * par.virtual_stages.value_or(1);
    const std::int64_t cap = chunks > 0 ? (in_.model.layers + chunks - 1) / chunks : 0;
    const auto fits = [&](std::int64_t k) {
      workload::ParallelismSpec p = par;
      p.fsdp_prefetch = k;
      return workload::estimate_memory(in_.model, plan.training, p, in_.software).peak().total() <= capacity;
    };
    if (!fits(0)) {
      rule = fmt::format("software {}: as many layers ahead as memory allows; none fits, 0", in_.software.name);
      return 0;
    }
    std::int64_t lo = 0, hi = cap;  // fits(lo); the answer is in [lo, hi]
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (fits(mid)) lo = mid;
      else hi = mid - 1;
    }
    rule = fmt::format("software {}: as many layers ahead as memory allows (at most a pass's {} layers)",
                       in_.software.name, cap);
    return lo;
  }

  const StepInput& in_;
  const workload::Recipe* recipe_;
  std::vector<std::string> choices_;
};

}  // namespace

workload::ResolvedPlan resolve_plan(const StepInput& input) { return Resolver(input).run(); }

}  // namespace trnsim::replay
