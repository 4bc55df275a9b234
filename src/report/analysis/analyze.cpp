// analyze: the figures of one StepRun (contract in step_report.hpp).
#include <algorithm>

#include "analyze_figures.hpp"
#include "trnsim/report/analysis/findings.hpp"
#include "trnsim/report/analysis/step_report.hpp"
#include "trnsim/workload/flops.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/software.hpp"

namespace trnsim::report {

namespace {

// Seconds of `rank`'s CP exchanges (Category::CpComm, from the call's start on the network) with no
// compute task of the rank running: what a ring block's transfer adds beyond the block's attention.
// The exchanges share one stream, so they do not overlap each other; one pass over both sorted lists.
double cp_exposed_seconds(const replay::StepRun& run, std::int32_t rank) {
  using Span = std::pair<sim::Time, sim::Time>;
  std::vector<Span> compute, exchanges;
  for (std::size_t t = 0; t < run.graph.tasks.size(); ++t) {
    const auto& task = run.graph.tasks[t];
    if (task.rank != rank) continue;
    const auto& span = run.timeline.spans[t];
    if (task.kind == workload::TaskKind::Compute) compute.emplace_back(span.start, span.end);
    if (task.category == workload::Category::CpComm) exchanges.emplace_back(span.active, span.end);
  }
  if (exchanges.empty()) return 0;
  std::sort(compute.begin(), compute.end());
  std::sort(exchanges.begin(), exchanges.end());
  // Merge the compute spans into disjoint ones.
  std::vector<Span> busy;
  for (const Span& c : compute) {
    if (!busy.empty() && c.first <= busy.back().second) {
      busy.back().second = std::max(busy.back().second, c.second);
    } else {
      busy.push_back(c);
    }
  }
  double exposed = 0;
  std::size_t b = 0;
  for (const auto& [begin, end] : exchanges) {
    while (b < busy.size() && busy[b].second <= begin) ++b;
    sim::Time covered = sim::Time::zero();
    for (std::size_t k = b; k < busy.size() && busy[k].first < end; ++k) {
      covered += std::min(end, busy[k].second) - std::max(begin, busy[k].first);
    }
    exposed += (end - begin - covered).to_seconds();
  }
  return exposed;
}

// HBM-bound kernels of the bottleneck rank and its ideal compute time (StepReport fields). Each
// Work is priced once and weighted by the number of the rank's tasks that run it; works with a
// measured time (traces) have no kernel split and are left out.
void hbm_bound_kernels(const replay::StepRun& run, const cost::ComputeModel& compute, StepReport& r) {
  std::vector<std::int64_t> uses(run.graph.works.size(), 0);
  for (const auto& task : run.graph.tasks) {
    if (task.rank == r.breakdown.rank && task.kind == workload::TaskKind::Compute) ++uses[task.index];
  }
  const double peak = compute.tensor_peak_flops();
  constexpr auto kHbm = static_cast<std::size_t>(cost::Engine::Hbm);
  for (std::size_t w = 0; w < uses.size(); ++w) {
    const workload::Work& work = run.graph.works[w];
    if (uses[w] == 0 || work.measured_s >= 0) continue;
    const auto n = static_cast<double>(uses[w]);
    if (peak > 0) r.ideal_compute_s += n * run.work_costs[w].flops / peak;
    for (const cost::Kernel& k : work.kernels) {
      const cost::KernelCost c = compute.cost(k);
      double others = 0;
      for (std::size_t e = 0; e < c.engine.size(); ++e) {
        if (e != kHbm) others = std::max(others, c.engine[e]);
      }
      if (c.engine[kHbm] <= others) continue;
      const auto op = static_cast<std::size_t>(k.op);
      r.hbm_bound_s[op] += n * c.seconds;
      r.hbm_excess_s[op] += n * (c.engine[kHbm] - others);
    }
  }
}

}  // namespace

std::vector<double> rank_compute_seconds(const replay::StepRun& run) {
  std::vector<double> out(run.graph.simulated_ranks.size(), 0);
  for (std::size_t t = 0; t < run.graph.tasks.size(); ++t) {
    const auto& task = run.graph.tasks[t];
    if (task.kind != workload::TaskKind::Compute) continue;
    const auto& span = run.timeline.spans[t];
    out[run.graph.rank_slot(task.rank)] += (span.end - span.active).to_seconds();
  }
  return out;
}

std::vector<double> stage_compute_seconds(const workload::StepGraph& graph, const std::vector<double>& rank_seconds) {
  std::vector<std::int32_t> rank_stage(graph.simulated_ranks.size(), 0);
  std::int32_t stages = 0;
  for (const auto& task : graph.tasks) {
    rank_stage[graph.rank_slot(task.rank)] = task.stage;
    stages = std::max(stages, task.stage + 1);
  }
  std::vector<double> out(static_cast<std::size_t>(stages), 0);
  for (std::size_t i = 0; i < rank_seconds.size(); ++i) {
    double& s = out[static_cast<std::size_t>(rank_stage[i])];
    s = std::max(s, rank_seconds[i]);
  }
  return out;
}

namespace {

// analyze's figures; `complete` off leaves out what extrapolate_report replaces (analyze_figures).
StepReport analyze_run(const replay::StepInput& input, const replay::StepRun& run, const AnalyzeOptions& options,
                       bool complete) {
  StepReport r;
  // A trace without a model (hand-written, Chakra) has no parameters and no model FLOPs.
  const bool has_model = input.model.layers > 0;
  r.model = has_model ? input.model.name : "(none: trace " + run.trace.file + ")";
  r.parameters = has_model ? input.model.parameters() : 0;
  r.instance = input.cluster.instance.name;
  r.chip = input.cluster.instance.chip.name;
  r.instances = input.cluster.instances;
  r.ultraserver_instances = input.cluster.instance.ultraserver_instances;
  r.chips = input.cluster.chips();
  r.plan = run.plan;
  r.attention = run.resolved.training.attention.value_or(hw::AttentionKernel::Flash);
  r.precision.software = input.software.name;
  r.precision.dtype = run.resolved.training.precision;
  for (const auto& e : input.software.precision) r.precision.stated.push_back(e.dtype);
  r.network = net::to_string(input.network);
  const auto& training = run.resolved.training;
  r.seq_len = training.seq_len;
  const hw::ChipSpec& chip = input.cluster.instance.chip;
  r.hbm_capped_by_dma = chip.dma_bandwidth > 0 && chip.dma_bandwidth <= chip.hbm_bandwidth;
  r.global_batch = training.global_batch;
  r.step_time_s = run.timeline.step_time.to_seconds();
  const double sequences = static_cast<double>(training.global_batch);
  r.sequences_per_s = r.step_time_s > 0 ? sequences / r.step_time_s : 0;
  r.tokens_per_s = r.sequences_per_s * static_cast<double>(training.seq_len);

  r.model_flops = has_model ? workload::model_flops_per_step(input.model, training) : 0;
  r.hardware_flops = workload::hardware_flops_per_step(run.graph);
  const hw::Dtype dtype = workload::matmul_dtype(training.precision, input.software.precision_for(training.precision));
  r.peak_flops = input.cluster.instance.chip.peak.of(dtype) * input.cluster.chips();
  if (r.step_time_s > 0 && r.peak_flops > 0) {
    r.mfu = r.model_flops / (r.step_time_s * r.peak_flops);
    r.hfu = r.hardware_flops / (r.step_time_s * r.peak_flops);
  }

  if (!complete) {
    r.breakdown.rank = options.bottleneck_rank.value_or(0);
  } else {
    r.breakdown = options.bottleneck_rank ? rank_breakdown(run.graph, run.timeline, *options.bottleneck_rank)
                                          : step_breakdown(run.graph, run.timeline);
  }
  for (std::size_t t = 0; t < run.graph.tasks.size(); ++t) {
    const auto& task = run.graph.tasks[t];
    if (task.rank != r.breakdown.rank) continue;
    r.bottleneck_stage = task.stage;
    const auto& span = run.timeline.spans[t];
    if (task.category == workload::Category::EpComm) r.ep_all_to_all_s += (span.end - span.active).to_seconds();
    if (task.kind != workload::TaskKind::Compute) continue;
    if (run.graph.works[task.index].name.find(":expert_fc") != std::string::npos) {
      r.expert_compute_s += (span.end - span.active).to_seconds();
    }
    const cost::TaskCost& c = run.work_costs[task.index];
    for (std::size_t e = 0; e < r.engine_busy.size(); ++e) r.engine_busy[e] += c.engine[e];
    for (std::size_t o = 0; o < r.op_seconds.size(); ++o) r.op_seconds[o] += c.op[o];
  }

  if (complete) {
    for (const auto& stage : run.memory.stages) r.memory.push_back({stage, run.rank_memory_capacity});
    r.stage_compute_s = stage_compute_seconds(run.graph, rank_compute_seconds(run));
  }
  const cost::ComputeModel compute(input.cluster.instance.chip, input.cluster.instance.calibration, dtype,
                                   run.physical_cores_per_rank);
  hbm_bound_kernels(run, compute, r);
  if (options.critical_path) r.critical_path = critical_path(run.graph, run.timeline);
  if (complete) r.links = link_utilisation(run.links, links_topology(run), r.step_time_s);
  r.ranks = run.ranks;
  r.simulated_ranks = static_cast<int>(run.graph.simulated_ranks.size());
  r.tasks = run.graph.tasks.size();
  r.events = run.timeline.events;
  if (r.plan.cp > 1) r.cp_exposed_s = cp_exposed_seconds(run, r.breakdown.rank);
  if (input.model.is_moe()) {
    r.expert_load = workload::expert_load(training, input.software);
    const workload::RankLayout layout(r.plan.tp, r.plan.grad_dp(), r.plan.pp, r.plan.rank_order, r.plan.ep, r.plan.cp);
    // EFA joins instances, or UltraServers (whose instances share NeuronLink): the EFA domain.
    const std::int64_t per_domain = r.instances > 0 ? r.ranks / r.instances * input.cluster.instance.ultraserver_instances : 0;
    r.ep_groups_over_efa = workload::ep_groups_spanning_instances(layout, per_domain);
  }
  // After ranks: the TP advice divides them.
  if (complete) r.findings = find_bottlenecks(r, run.graph.findings);
  r.choices = run.resolved.choices;

  r.build_seconds = run.build_seconds;
  r.simulate_seconds = run.simulate_seconds;
  r.trace = run.trace;
  return r;
}

}  // namespace

bool PrecisionUse::generic() const { return std::find(stated.begin(), stated.end(), dtype) == stated.end(); }

StepReport analyze(const replay::StepInput& input, const replay::StepRun& run, const AnalyzeOptions& options) {
  return analyze_run(input, run, options, true);
}

StepReport analyze_figures(const replay::StepInput& input, const replay::StepRun& run, std::int32_t rank) {
  return analyze_run(input, run, {.critical_path = false, .bottleneck_rank = rank}, false);
}

}  // namespace trnsim::report
