// A StepReport extrapolated from two reduced runs (contract in report/analysis/fast_forward.hpp).
#include "trnsim/report/analysis/fast_forward.hpp"

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "analyze_figures.hpp"
#include "trnsim/error.hpp"
#include "trnsim/report/analysis/findings.hpp"
#include "trnsim/workload/flops.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/software.hpp"

namespace trnsim::report {
namespace {

using replay::extrapolate;

template <std::size_t N>
std::array<double, N> extrapolate(const std::array<double, N>& a, const std::array<double, N>& b, std::int64_t k) {
  std::array<double, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = extrapolate(a[i], b[i], k);
  return out;
}

// The bottleneck rank of the real step: the one with the most compute (ties: the lowest rank, as
// step_breakdown), chosen on each rank's exact compute time extrapolated in picoseconds where
// rank_compute_times applies to both replays (then only that rank's breakdowns are swept), else
// on every rank's breakdown extrapolated.
Breakdown bottleneck_breakdown(const replay::FastForwardRuns& runs) {
  const auto ta = rank_compute_times(runs.first.graph, runs.first.timeline);
  const auto tb = rank_compute_times(runs.second.graph, runs.second.timeline);
  if (ta && tb && ta->size() == tb->size() && !tb->empty()) {
    std::vector<sim::Time> moved(tb->size());
    for (std::size_t i = 0; i < tb->size(); ++i)
      moved[i] = sim::Time::ps(extrapolate((*ta)[i].picoseconds(), (*tb)[i].picoseconds(), runs.shape.periods));
    const std::int32_t rank = runs.second.graph.simulated_ranks[most_compute(moved)];
    const Breakdown a = rank_breakdown(runs.first.graph, runs.first.timeline, rank);
    const Breakdown b = rank_breakdown(runs.second.graph, runs.second.timeline, rank);
    Breakdown out;
    out.rank = rank;
    out.seconds = extrapolate(a.seconds, b.seconds, runs.shape.periods);
    return out;
  }
  const std::vector<Breakdown> a = rank_breakdowns(runs.first.graph, runs.first.timeline);
  const std::vector<Breakdown> b = rank_breakdowns(runs.second.graph, runs.second.timeline);
  std::vector<Breakdown> moved(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    moved[i].rank = b[i].rank;
    moved[i].seconds = extrapolate(a[i].seconds, b[i].seconds, runs.shape.periods);
  }
  return moved.empty() ? Breakdown{} : moved[bottleneck_of(moved)];
}

// Link usage of the real step: bytes and busy time per link moved like every additive figure,
// written over M1's list (taken from `runs`: at 65,536 chips a list is 655,360 links, 31 MB);
// nullopt, with the list left as it was, when the two replays loaded different links.
std::optional<std::vector<net::LinkUsage>> extrapolate_links(replay::FastForwardRuns& runs) {
  const auto& b = runs.second.links;
  if (runs.first.links.size() != b.size()) return std::nullopt;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (runs.first.links[i].id != b[i].id) return std::nullopt;
  std::vector<net::LinkUsage> out = std::move(runs.first.links);
  for (std::size_t i = 0; i < b.size(); ++i) {
    out[i].bytes = extrapolate(out[i].bytes, b[i].bytes, runs.shape.periods);
    out[i].busy_s = extrapolate(out[i].busy_s, b[i].busy_s, runs.shape.periods);
  }
  return out;
}

}  // namespace

std::optional<StepReport> extrapolate_report(const replay::StepInput& input, const workload::ResolvedPlan& resolved,
                                             replay::FastForwardRuns runs, const AnalyzeOptions& options) {
  if (runs.first.graph.simulated_ranks != runs.second.graph.simulated_ranks) return std::nullopt;
  const auto links = extrapolate_links(runs);
  if (!links) return std::nullopt;
  const std::int64_t k = runs.shape.periods;
  const Breakdown bottleneck = bottleneck_breakdown(runs);
  // The critical path's contributors are re-ranked after the move (below), and the breakdown,
  // memory, stage compute, links and findings derived again: the reduced runs' are not needed.
  const StepReport a = analyze_figures(input, runs.first, bottleneck.rank);
  const StepReport b = analyze_figures(input, runs.second, bottleneck.rank);

  StepReport r = b;  // what does not depend on the micro-batches (names, cluster, ranks, plan shape)
  const workload::TrainingSpec& training = resolved.training;
  r.plan = workload::make_plan(input.model, training, resolved.parallelism, runs.second.ranks);
  r.global_batch = training.global_batch;
  r.step_time_s = runs.step_time.to_seconds();
  r.sequences_per_s = r.step_time_s > 0 ? static_cast<double>(training.global_batch) / r.step_time_s : 0;
  r.tokens_per_s = r.sequences_per_s * static_cast<double>(training.seq_len);
  const bool has_model = input.model.layers > 0;
  r.model_flops = has_model ? workload::model_flops_per_step(input.model, training) : 0;
  r.hardware_flops = extrapolate(a.hardware_flops, b.hardware_flops, k);
  r.mfu = r.hfu = 0;
  if (r.step_time_s > 0 && r.peak_flops > 0) {
    r.mfu = r.model_flops / (r.step_time_s * r.peak_flops);
    r.hfu = r.hardware_flops / (r.step_time_s * r.peak_flops);
  }
  r.breakdown = bottleneck;
  r.engine_busy = extrapolate(a.engine_busy, b.engine_busy, k);
  r.op_seconds = extrapolate(a.op_seconds, b.op_seconds, k);
  r.hbm_bound_s = extrapolate(a.hbm_bound_s, b.hbm_bound_s, k);
  r.hbm_excess_s = extrapolate(a.hbm_excess_s, b.hbm_excess_s, k);
  r.ideal_compute_s = extrapolate(a.ideal_compute_s, b.ideal_compute_s, k);
  r.ep_all_to_all_s = extrapolate(a.ep_all_to_all_s, b.ep_all_to_all_s, k);
  r.cp_exposed_s = extrapolate(a.cp_exposed_s, b.cp_exposed_s, k);
  r.expert_compute_s = extrapolate(a.expert_compute_s, b.expert_compute_s, k);
  if (input.model.is_moe()) r.expert_load = workload::expert_load(training, input.software);
  // Stage compute: each simulated rank's moved, then the busiest per stage.
  const std::vector<double> ra = rank_compute_seconds(runs.first), rb = rank_compute_seconds(runs.second);
  std::vector<double> ranks(rb.size());
  for (std::size_t i = 0; i < rb.size(); ++i) ranks[i] = extrapolate(ra[i], rb[i], k);
  r.stage_compute_s = stage_compute_seconds(runs.second.graph, ranks);
  r.memory.clear();
  const workload::MemoryEstimate memory =
      workload::estimate_memory(input.model, training, resolved.parallelism, input.software);
  for (const auto& stage : memory.stages) r.memory.push_back({stage, runs.second.rank_memory_capacity});
  if (options.critical_path) {
    if (runs.first_graph != replay::FirstGraph::Full)
      throw InternalError("extrapolate_report: a critical path asked of a reduced run without dependency edges");
    constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
    r.critical_path = extrapolate_path(critical_path(runs.first.graph, runs.first.timeline, kAll),
                                       critical_path(runs.second.graph, runs.second.timeline, kAll), k, r.step_time_s);
  }
  r.links = link_utilisation(*links, links_topology(runs.second), r.step_time_s);
  r.tasks = static_cast<std::size_t>(
      extrapolate(static_cast<std::int64_t>(a.tasks), static_cast<std::int64_t>(b.tasks), k));
  r.events = extrapolate(a.events, b.events, k);
  r.findings = find_bottlenecks(r, runs.second.graph.findings);
  r.choices = resolved.choices;
  r.build_seconds = a.build_seconds + b.build_seconds;
  r.simulate_seconds = a.simulate_seconds + b.simulate_seconds;
  r.fast_forward = true;
  return r;
}

StepReport simulate_and_analyze(const replay::StepInput& input, const workload::ResolvedPlan& resolved,
                                bool fast_forward, const AnalyzeOptions& options,
                                std::shared_ptr<net::Fabric> fabric) {
  if (fast_forward) {
    if (const auto shape = replay::fast_forward_shape(input, resolved)) {
      if (!fabric) fabric = std::make_shared<net::Fabric>(input.cluster);
      // The critical path walks M1's dependency edges: M1 is built for it (else cut from M2).
      const auto graph = options.critical_path ? replay::FirstGraph::Full : replay::FirstGraph::TasksOnly;
      if (auto runs = replay::fast_forward_runs(input, resolved, *shape, fabric, graph)) {
        if (auto moved = extrapolate_report(input, resolved, std::move(*runs), options)) return std::move(*moved);
      }
    }
  }
  replay::StepRun run = replay::prepare_step(input, resolved);
  replay::replay_step(input, run, std::move(fabric));
  return analyze(input, run, options);
}

}  // namespace trnsim::report
