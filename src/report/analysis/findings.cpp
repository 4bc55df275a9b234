// Time rules of the bottleneck findings (contract and accounting in report/analysis/findings.hpp).
#include "trnsim/report/analysis/findings.hpp"

#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "trnsim/enum_names.hpp"
#include "trnsim/workload/software.hpp"

namespace trnsim::report {
namespace {

using cost::OpClass;

double part(const StepReport& r, Part p) { return r.breakdown.seconds[static_cast<std::size_t>(p)]; }
double op(const std::array<double, cost::kOpClassCount>& a, OpClass c) { return a[static_cast<std::size_t>(c)]; }
double pct(double part_s, double whole_s) { return whole_s > 0 ? 100 * part_s / whole_s : 0; }

using Classes = std::span<const OpClass>;
constexpr OpClass kDense[] = {OpClass::Matmul, OpClass::Attention};
constexpr OpClass kOther[] = {OpClass::Norm,      OpClass::Activation, OpClass::Elementwise,
                              OpClass::Embedding, OpClass::Loss,       OpClass::Optimizer};
constexpr OpClass kAll[] = {OpClass::Matmul,    OpClass::Attention, OpClass::Norm, OpClass::Activation,
                            OpClass::Elementwise, OpClass::Embedding, OpClass::Loss, OpClass::Optimizer};
constexpr Classes kDenseClasses{kDense}, kOtherClasses{kOther}, kAllClasses{kAll};

// The op class with the most seconds in `a` among `classes` (first on ties).
OpClass largest(const std::array<double, cost::kOpClassCount>& a, Classes classes) {
  OpClass best = classes.front();
  for (const OpClass c : classes) {
    if (op(a, c) > op(a, best)) best = c;
  }
  return best;
}

double sum_of(const std::array<double, cost::kOpClassCount>& a, Classes classes) {
  double s = 0;
  for (const OpClass c : classes) s += op(a, c);
  return s;
}

// Micro-batches each pipeline runs per step, and the idle share of a step the schedule's closed
// form predicts: (p-1)/(m+p-1) for GPipe and 1F1B; interleaving over v chunks divides the
// ramp by v: (p-1)/(v m + p - 1) (Narayanan et al. 2021).
double ideal_bubble_share(const workload::Plan& p) {
  const double pp = static_cast<double>(p.pp);
  const double m = static_cast<double>(p.micro_batches);
  const double v = p.schedule == workload::PipelineSchedule::Interleaved ? static_cast<double>(p.virtual_stages) : 1;
  return (pp - 1) / (v * m + pp - 1);
}

void exposed_communication(const StepReport& r, std::vector<Finding>& out) {
  const auto& p = r.plan;
  const double step = r.step_time_s;
  // The MoE all-to-alls and the CP K/V exchanges run on the TP stream: moe_all_to_all and
  // cp_exposed claim their time.
  const double tp = std::max(0.0, part(r, Part::ExposedTp) - r.ep_all_to_all_s - r.cp_exposed_s);
  const std::int64_t per_instance = r.instances > 0 ? r.ranks / r.instances : r.ranks;
  out.push_back({"exposed_tp_comm",
                 fmt::format("the bottleneck rank waits {:.4g} s ({:.1f} % of the step) on tensor-parallel "
                             "collectives with its compute idle (tp = {}, sequence parallel {})",
                             tp, pct(tp, step), p.tp, p.sequence_parallel ? "on" : "off"),
                 tp,
                 fmt::format("{}{}lower parallelism.tp (now {}) in favour of pp or dp, or a larger "
                             "training.micro_batch (longer compute per collective)",
                             p.sequence_parallel || p.tp == 1
                                 ? ""
                                 : "set parallelism.sequence_parallel=true (reduce-scatter + all-gather), ",
                             p.tp > per_instance
                                 ? fmt::format("keep each TP group inside one instance (tp <= {} ranks), ", per_instance)
                                 : std::string(),
                             p.tp)});
  const double pp = part(r, Part::ExposedPp);
  out.push_back({"pipeline_send_recv",
                 fmt::format("the bottleneck rank waits {:.4g} s ({:.1f} % of the step) on its own pipeline "
                             "sends with its compute idle (pp = {})",
                             pp, pct(pp, step), p.pp),
                 pp,
                 "place consecutive stages on the same instance (parallelism.rank_order), or raise "
                 "training.micro_batch so fewer, larger activations cross"});
  const double dp = part(r, Part::ExposedDp);
  if (p.zero == 3 && p.grad_dp() > 1) {
    out.push_back({"fsdp_exposed_gather",
                   fmt::format("the bottleneck rank waits {:.4g} s ({:.1f} % of the step) on FSDP all-gathers (and "
                               "reduce-scatters) not hidden behind the previous layer's compute (dp = {}, {} "
                               "micro-batches per step, every layer gathered twice per micro-batch)",
                               dp, pct(dp, step), p.dp, p.micro_batches),
                   dp,
                   fmt::format("larger wrap units (one layer per unit now) or deeper prefetch "
                               "(software.fsdp_prefetch_units), a larger training.micro_batch (more compute per "
                               "gather), or a higher parallelism.tp (now {}), which shrinks every gather and the DP "
                               "group",
                               p.tp)});
    return;
  }
  out.push_back({"exposed_dp_comm",
                 fmt::format("the bottleneck rank waits {:.4g} s ({:.1f} % of the step) on the data-parallel "
                             "gradient sync after its backward pass (dp = {}, ZeRO-{}, {} micro-batches per step)",
                             dp, pct(dp, step), p.dp, p.zero, p.micro_batches),
                 dp,
                 fmt::format("more micro-batches per step (training.global_batch; now {}) amortise the sync, "
                             "larger buckets (training.gradient_bucket_MB) overlap more of it with the backward "
                             "pass; fewer DP ranks across EFA (lower dp, higher tp or pp) or an instance with "
                             "more EFA bandwidth shorten it",
                             r.global_batch)});
}

void moe_rules(const StepReport& r, std::vector<Finding>& out) {
  const auto& p = r.plan;
  const double a2a = r.ep_all_to_all_s;
  const std::int64_t groups = p.ep > 0 ? p.dp / p.ep : 0;
  out.push_back({"moe_all_to_all",
                 fmt::format("the bottleneck rank waits {:.4g} s ({:.1f} % of the step) on the MoE dispatch and "
                             "combine all-to-alls of its EP group (ep = {}){}",
                             a2a, pct(a2a, r.step_time_s), p.ep,
                             r.ep_groups_over_efa > 0
                                 ? fmt::format("; {} of {} EP groups span more than one instance{}, so their "
                                               "all-to-alls cross EFA",
                                               r.ep_groups_over_efa, groups,
                                               r.ultraserver_instances > 1 ? " (UltraServer)" : "")
                                 : std::string()),
                 a2a,
                 fmt::format("keep each EP group inside one instance or UltraServer (tp x ep <= its ranks, tp "
                             "and ep fastest in the rank order), fewer EP ranks (parallelism.ep, now {}), or a larger "
                             "training.micro_batch (fewer, larger all-to-alls)",
                             p.ep)});
  if (r.expert_load <= 1) return;
  const double extra = r.expert_compute_s * (1 - 1 / r.expert_load);
  out.push_back({"expert_imbalance",
                 fmt::format("the busiest expert-parallel rank carries {:.3g} x the mean routed load "
                             "(training.moe_imbalance, after the capacity factor): its expert GEMMs take {:.4g} s, "
                             "{:.4g} s ({:.1f} % of the step) beyond a balanced load",
                             r.expert_load, r.expert_compute_s, extra, pct(extra, r.step_time_s)),
                 extra,
                 "balance the router (an auxiliary load-balancing loss, or DeepSeek-V3's bias-based balancing), "
                 "cap the load with training.moe_capacity_factor and token dropping, or hold more experts per "
                 "rank (lower parallelism.ep) so that their loads average out"});
}

// Context parallelism: the exchanges' time with the rank's compute idle (StepReport::cp_exposed_s).
void context_rules(const StepReport& r, std::vector<Finding>& out) {
  const auto& p = r.plan;
  if (p.cp <= 1) return;
  const double s = r.cp_exposed_s;
  out.push_back({"cp_exposed",
                 fmt::format("the bottleneck rank waits {:.4g} s ({:.1f} % of the step) on context-parallel K/V "
                             "exchanges its attention does not hide (cp = {}, {} tokens per rank and sequence): a "
                             "block's transfer outlasts the block's attention, or an exchange has no compute beside it",
                             s, pct(s, r.step_time_s), p.cp, r.seq_len / p.cp),
                 s,
                 fmt::format("keep the CP group on faster links (tp x cp within an instance or UltraServer, tp and "
                             "cp fastest in the rank order), fewer CP ranks (parallelism.cp, now {}: longer blocks "
                             "per transfer), or ring attention instead of an all-gather (software cp_attention)",
                             p.cp)});
}

void pipeline_rules(const StepReport& r, std::vector<Finding>& out) {
  const auto& p = r.plan;
  if (p.pp <= 1) return;
  const double step = r.step_time_s;
  const double bubble = part(r, Part::Bubble);
  out.push_back({"pipeline_bubble",
                 fmt::format("stage {} idles {:.4g} s ({:.1f} % of the step) with nothing to compute or waiting in a "
                             "collective for another stage; the {} closed form (p-1)/({}m+p-1) gives {:.1f} % "
                             "for p = {}, m = {}{}",
                             r.bottleneck_stage, bubble, pct(bubble, step), schedule_name(p.schedule),
                             p.schedule == workload::PipelineSchedule::Interleaved ? "v " : "",
                             100 * ideal_bubble_share(p), p.pp, p.micro_batches,
                             p.schedule == workload::PipelineSchedule::Interleaved
                                 ? fmt::format(", v = {}", p.virtual_stages)
                                 : std::string()),
                 bubble,
                 fmt::format("more micro-batches per pipeline (now {}: raise training.global_batch or lower "
                             "training.micro_batch), parallelism.schedule=1f1b-interleaved with "
                             "parallelism.virtual_stages > 1, or a lower parallelism.pp (now {})",
                             p.micro_batches, p.pp)});

  const auto& stages = r.stage_compute_s;
  if (stages.size() < 2) return;
  const auto slowest = std::max_element(stages.begin(), stages.end());  // first on ties
  const double mean = std::accumulate(stages.begin(), stages.end(), 0.0) / static_cast<double>(stages.size());
  if (mean <= 0 || *slowest < mean * (1 + kImbalanceShare)) return;
  const auto s = slowest - stages.begin();
  const auto last = static_cast<std::ptrdiff_t>(stages.size()) - 1;
  out.push_back({"unbalanced_stages",
                 fmt::format("stage {}{} computes {:.4g} s per step against a mean of {:.4g} s over {} stages "
                             "(+{:.1f} %); every stage waits for the slowest",
                             s, s == 0 ? " (embedding)" : s == last ? " (LM head and loss)" : "", *slowest, mean,
                             stages.size(), pct(*slowest - mean, mean)),
                 *slowest - mean,
                 fmt::format("give stage {} fewer layers: a parallelism.pp (now {}) or virtual_stages for which "
                             "the layer split leaves the embedding and head stages lighter", s, p.pp)});
}

void compute_rules(const StepReport& r, std::vector<Finding>& out) {
  const auto& p = r.plan;
  const double step = r.step_time_s;
  const double compute = r.breakdown.compute();
  const double recompute = part(r, Part::Recompute);
  if (p.recompute != workload::Recompute::None) {
    out.push_back({"recompute",
                   fmt::format("recomputing activations ({}) takes {:.4g} s ({:.1f} % of the step)",
                               recompute_name(p.recompute), recompute, pct(recompute, step)),
                   recompute,
                   fmt::format("parallelism.recompute={} if memory allows (see the memory table), or sequence "
                               "parallelism / more tp to make room",
                               p.recompute == workload::Recompute::Full ? "selective" : "none")});
  }

  const double other_excess = sum_of(r.hbm_excess_s, kOtherClasses);
  const OpClass other = largest(r.hbm_bound_s, kOtherClasses);
  out.push_back({"hbm_bound_ops",
                 fmt::format("kernels limited by HBM bandwidth (HBM their largest engine time) take {:.4g} s, "
                             "{:.1f} % of the rank's {:.4g} s of compute, mostly {} ({:.4g} s); {:.4g} s of it is "
                             "beyond their next busiest engine",
                             sum_of(r.hbm_bound_s, kOtherClasses), pct(sum_of(r.hbm_bound_s, kOtherClasses), compute),
                             compute, op_class_name(other), op(r.hbm_bound_s, other), other_excess),
                 other_excess,
                 r.hbm_capped_by_dma
                     ? "these kernels move bytes, not FLOPs: fuse them (fewer HBM round trips), or a chip with more "
                       "HBM and DMA bandwidth together (cluster.chip.hbm_bandwidth_GBps and dma_bandwidth_GBps: "
                       "the DMA engines, no faster than HBM on this chip, cap what more HBM alone would buy); a "
                       "larger micro-batch does not help them"
                     : "these kernels move bytes, not FLOPs: fuse them (fewer HBM round trips), or a chip with more "
                       "HBM bandwidth (cluster.chip.hbm_bandwidth_GBps); a larger micro-batch does not help them"});

  const double dense_excess = sum_of(r.hbm_excess_s, kDenseClasses);
  out.push_back({"low_arithmetic_intensity",
                 fmt::format("matmul and attention kernels that wait on HBM (too few tokens per weight byte: "
                             "micro-batch {} x {} tokens, tp {}) take {:.4g} s, {:.4g} s beyond their tensor time",
                             p.micro_batch, r.seq_len, p.tp, sum_of(r.hbm_bound_s, kDenseClasses), dense_excess),
                 dense_excess,
                 fmt::format("raise training.micro_batch (now {}) so each weight byte serves more tokens, or lower "
                             "parallelism.tp (now {}) so each rank's matmuls are larger",
                             p.micro_batch, p.tp)});

  if (step > 0 && compute >= kComputeBoundShare * step) {
    const OpClass top = largest(r.op_seconds, kAllClasses);
    const double beyond = std::max(0.0, compute - r.ideal_compute_s - other_excess - dense_excess);
    // The three op classes with the most seconds (class order on ties).
    std::vector<OpClass> order(kAllClasses.begin(), kAllClasses.end());
    std::stable_sort(order.begin(), order.end(),
                     [&r](OpClass a, OpClass b) { return op(r.op_seconds, a) > op(r.op_seconds, b); });
    std::vector<std::string> top3;
    for (std::size_t i = 0; i < 3 && i < order.size(); ++i) {
      top3.push_back(fmt::format("{} {:.4g} s", op_class_name(order[i]), op(r.op_seconds, order[i])));
    }
    out.push_back({"compute_bound",
                   fmt::format("the bottleneck rank computes for {:.4g} s, {:.1f} % of the step, mostly {} ({}); at "
                               "the tensor engine's full-tile peak its FLOPs would take {:.4g} s (MFU {:.1f} %)",
                               compute, pct(compute, step), op_class_name(top), fmt::join(top3, ", "), r.ideal_compute_s,
                               100 * r.mfu),
                   beyond,
                   top == OpClass::Matmul
                       ? "more chips (dp) shorten it; matmul dimensions (hidden / tp, ffn / tp) in multiples of "
                         "128 fill the tensor engine's tiles; training.dtype=fp8 where the chip's fp8 peak is higher"
                       : fmt::format("{} dominates: shorter sequences (training.seq_len) or more tp/cp split it; "
                                     "more chips (dp) shorten the step",
                                     op_class_name(top))});
  }
}

void network_rules(const StepReport& r, const std::vector<std::string>& layout, std::vector<Finding>& out) {
  for (const std::string& m : layout) {
    out.push_back({"tp_spans_instances", m, 0,
                   "keep each TP group inside one instance: parallelism.tp at most the ranks per instance, with "
                   "tp fastest in parallelism.rank_order"});
  }
  if (r.links.top.empty()) return;
  const LinkLoad& hot = r.links.top.front();
  if (hot.busy_fraction < kHotLinkShare) return;
  out.push_back({"hot_link",
                 fmt::format("the busiest link, {} {} -> {} ({:.1f} GB/s), is busy {:.1f} % of the step and "
                             "carries {:.4g} GB; its time is counted in the exposed-communication findings",
                             trnsim::to_string(hot.kind), hot.src, hot.dst, hot.bandwidth / 1e9, 100 * hot.busy_fraction,
                             hot.bytes / 1e9),
                 0,
                 fmt::format("move the groups that share {} links to faster ones (parallelism.rank_order, tp "
                             "within an instance), or reduce what crosses it",
                             trnsim::to_string(hot.kind))});
}

// A training dtype the software states no precision recipe for: the storage formats, and so
// memory, optimizer traffic and gradient bytes, are the generic recipe's, not the stack's.
void precision_rules(const StepReport& r, std::vector<Finding>& out) {
  const PrecisionUse& u = r.precision;
  if (!u.generic()) return;
  const workload::PrecisionRecipe g = workload::default_recipe(u.dtype);
  std::vector<std::string_view> stated;
  for (const workload::Precision p : u.stated) stated.push_back(trnsim::to_string(p));
  out.push_back({"generic_precision_recipe",
                 fmt::format("software {} has no precision recipe for training dtype {}: the generic {} recipe ran "
                             "(weights {}, gradients {}, accumulation {}, master weights {}, optimizer states {}{})",
                             u.software, trnsim::to_string(u.dtype), trnsim::to_string(u.dtype),
                             trnsim::to_string(g.weights), trnsim::to_string(g.gradients),
                             trnsim::to_string(g.grad_accumulation), trnsim::to_string(g.master_weights),
                             trnsim::to_string(g.optimizer_states), g.stochastic_rounding ? ", stochastic rounding" : ""),
                 0,
                 fmt::format("run a dtype the software has a recipe for ({}), or add a sourced \"precision\" entry "
                             "for {} to the software preset",
                             stated.empty() ? std::string("none") : fmt::format("{}", fmt::join(stated, ", ")),
                             trnsim::to_string(u.dtype))});
}

}  // namespace

std::vector<Finding> find_bottlenecks(const StepReport& r, const std::vector<std::string>& layout) {
  std::vector<Finding> timed;
  exposed_communication(r, timed);
  moe_rules(r, timed);
  context_rules(r, timed);
  pipeline_rules(r, timed);
  compute_rules(r, timed);
  std::vector<Finding> out = memory_findings(r);
  const double floor = kMinStepShare * r.step_time_s;
  for (Finding& f : timed) {
    if (f.seconds > 0 && f.seconds >= floor) out.push_back(std::move(f));
  }
  const auto oom_end = std::partition_point(out.begin(), out.end(),
                                            [](const Finding& f) { return f.rule == "out_of_memory"; });
  std::stable_sort(oom_end, out.end(), [](const Finding& a, const Finding& b) { return a.seconds > b.seconds; });
  network_rules(r, layout, out);  // 0 seconds: after every finding that costs time
  precision_rules(r, out);
  return out;
}

}  // namespace trnsim::report
