#include "trnsim/replay/step_size.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::replay {
namespace {

// Tasks per layer per micro-batch on one rank: the bundled examples build 11.6 (tiny-trn1 with
// 16 layers, 64 micro-batches) to 15.6 (tiny-trn1: 249 tasks for 2 layers x 8 micro-batches,
// counted by `trnsim -v run`), recompute and pipeline transfers included; 16 errs high. The
// embedding, head, loss and optimizer are counted as two more layers.
constexpr double kTasksPerLayer = 16;
// Context parallelism adds per layer and micro-batch, for each of its cp - 1 further blocks, a
// transfer and a block task in the forward, the backward and a full recompute (context_steps.hpp).
constexpr double kTasksPerCpBlock = 6;
constexpr double kExtraLayers = 2;
// Bytes per task while a step runs: llama2-70b-trn1 holds 375,210 tasks in 54.5 MB peak resident
// memory (47.6 MB above tiny-trn1's 6.9 MB; /usr/bin/time -v): 127 bytes per task (the task, its
// edges, its engine event, its timeline span). 256 leaves room for the reports written from it.
constexpr double kBytesPerTask = 256;
// Per rank and per chip of the cluster: device map, topology and routing tables (an estimate of
// their vectors' sizes, rounded up).
constexpr double kBytesPerRank = 64;
constexpr double kBytesPerChip = 1024;

std::string bytes_text(double b) { return fmt::format("{:.3g} GB", b / 1e9); }

}  // namespace

StepSize estimate_step_size(const hw::ClusterSpec& cluster, const workload::ModelSpec& model,
                            const workload::Plan& plan, bool symmetric) {
  const double ranks_simulated = symmetric ? static_cast<double>(plan.pp) : static_cast<double>(plan.ranks());
  const double layers_per_rank = std::ceil(static_cast<double>(model.layers) / static_cast<double>(plan.pp));
  StepSize s;
  s.tasks = ranks_simulated * static_cast<double>(plan.micro_batches) * (layers_per_rank + kExtraLayers) *
            (kTasksPerLayer + kTasksPerCpBlock * static_cast<double>(plan.cp - 1));
  s.bytes = s.tasks * kBytesPerTask + static_cast<double>(cluster.ranks()) * kBytesPerRank +
            static_cast<double>(cluster.chips()) * kBytesPerChip;
  return s;
}

void check_step_size(const StepSize& size, double max_bytes) {
  if (max_bytes > 0 && size.bytes > max_bytes)
    throw InputError(fmt::format("the step would need about {} of memory to simulate (about {:.3g} tasks), more "
                                 "than the limit of {} (--max-memory; default: the memory available now); "
                                 "--force runs it anyway",
                                 bytes_text(size.bytes), size.tasks, bytes_text(max_bytes)),
                     "the step needs more memory than the limit");
}

double estimate_step_seconds(const workload::StepGraph& graph, const std::vector<double>& work_seconds,
                             const hw::ClusterSpec& cluster) {
  const hw::InstanceSpec& inst = cluster.instance;
  const hw::Calibration& cal = inst.calibration;
  // The fastest way bytes move between two ranks: a collective of n ranks moves at least half its
  // buffer through some rank (n = 2), at no more than this rate.
  double fastest = 0;
  for (const double bw : {inst.intra.bandwidth, inst.efa.bandwidth, inst.ultraserver_link.bandwidth,
                          inst.inter_rack_link.bandwidth, inst.chip.hbm_bandwidth, inst.chip.dma_bandwidth})
    fastest = std::max(fastest, bw);
  // Each (simulated rank, stream) runs one task at a time, so its tasks' durations add up to a
  // lower bound of the step.
  std::vector<double> per_stream(graph.simulated_ranks.size() * workload::kStreamCount, 0.0);
  for (const workload::Task& t : graph.tasks) {
    double s = 0;
    if (t.kind == workload::TaskKind::Compute) {
      s = t.index < work_seconds.size() ? work_seconds[t.index] : 0;
    } else {
      const double bytes = t.kind == workload::TaskKind::Collective && t.index < graph.collectives.size()
                               ? graph.collectives[t.index].bytes
                               : t.bytes;
      s = (t.kind == workload::TaskKind::Collective ? cal.collective_launch_s : 0) +
          (fastest > 0 ? bytes / 2 / fastest : 0);
    }
    if (!(s >= 0)) s = std::numeric_limits<double>::infinity();  // NaN counts as too long
    per_stream[graph.rank_slot(t.rank) * workload::kStreamCount + static_cast<std::size_t>(t.stream)] += s;
  }
  return per_stream.empty() ? 0 : *std::max_element(per_stream.begin(), per_stream.end());
}

void check_step_seconds(double seconds) {
  if (!(seconds <= kMaxStepSeconds))
    throw InputError(fmt::format("the step would last at least {:.3g} s ({:.3g} days) of simulated time, beyond "
                                 "the {:.0f} days trnsim's clock holds: check the hardware figures and the plan for "
                                 "a value off by orders of magnitude",
                                 seconds, seconds / 86400, kMaxStepSeconds / 86400),
                     "the step is longer than the simulated clock holds");
}

}  // namespace trnsim::replay
