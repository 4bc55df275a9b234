// The "fastest plan that fits" rule for unset fields (contract and rule in plan_search.hpp).
#include "trnsim/replay/plan_search.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "trnsim/workload/memory.hpp"

namespace trnsim::replay {
namespace {

using workload::ParallelismSpec;
using workload::PipelineSchedule;
using workload::Recompute;
using workload::TrainingSpec;

// Largest power-of-two micro-batch considered: beyond 16 sequences a micro-batch rarely fits,
// and the pipeline needs micro-batches to fill its bubble.
constexpr std::array<std::int64_t, 5> kMicroBatches = {1, 2, 4, 8, 16};
constexpr std::array<Recompute, 3> kRecompute = {Recompute::None, Recompute::Selective, Recompute::Full};

// The values of one micro-batch size's virtual_stages candidates, ascending, up to v_max.
std::vector<std::int64_t> virtual_stage_values(const workload::ModelSpec& model, const TrainingSpec& training,
                                               const ParallelismSpec& p, std::int64_t micro_batch,
                                               std::int64_t v_max) {
  if (p.virtual_stages) return {*p.virtual_stages};
  std::vector<std::int64_t> out{1};
  // A set gpipe or 1f1b schedule runs one chunk per rank (make_plan rejects more).
  if (p.schedule && *p.schedule != PipelineSchedule::Interleaved) return out;
  if (p.pp <= 1 || p.dp < 1 || micro_batch < 1) return out;
  const std::int64_t micro_batches = training.global_batch / (p.dp * micro_batch);
  if (micro_batches % p.pp != 0) return out;
  for (std::int64_t v = 2; v <= v_max && p.pp * v <= model.layers; ++v) out.push_back(v);
  return out;
}

std::vector<std::int64_t> micro_batch_values(const TrainingSpec& training, const ParallelismSpec& p) {
  if (training.micro_batch) return {*training.micro_batch};
  std::vector<std::int64_t> out;
  const std::int64_t per_replica = p.dp > 0 && training.global_batch % p.dp == 0 ? training.global_batch / p.dp : 0;
  for (const std::int64_t b : kMicroBatches) {
    if (per_replica > 0 && per_replica % b == 0) out.push_back(b);
  }
  // A batch that does not split over dp keeps 1, so that make_plan names the real problem.
  if (out.empty()) out.push_back(1);
  return out;
}

std::vector<PlanCandidate> enumerate(const workload::ModelSpec& model, const TrainingSpec& training,
                                     const ParallelismSpec& p, std::int64_t v_max) {
  std::vector<Recompute> recomputes(kRecompute.begin(), kRecompute.end());
  if (p.recompute) recomputes = {*p.recompute};
  std::vector<int> zeros{0};
  if (p.zero) {
    zeros = {*p.zero};
  } else if (p.dp > 1) {
    zeros.push_back(1);
  }
  const bool sp = p.sequence_parallel.value_or(p.tp > 1 && training.seq_len % p.tp == 0);
  std::vector<PlanCandidate> out;
  for (const std::int64_t b : micro_batch_values(training, p)) {
    for (const std::int64_t v : virtual_stage_values(model, training, p, b, v_max)) {
      for (const Recompute rc : recomputes) {
        for (const int z : zeros) {
          PlanCandidate c{training, p};
          c.training.micro_batch = b;
          c.parallelism.virtual_stages = v;
          c.parallelism.schedule = p.schedule.value_or(v > 1 ? PipelineSchedule::Interleaved
                                                             : PipelineSchedule::OneFOneB);
          c.parallelism.recompute = rc;
          c.parallelism.zero = z;
          c.parallelism.sequence_parallel = sp;
          out.push_back(std::move(c));
        }
      }
    }
  }
  return out;
}

// One line per unset field of the original specs, saying what `chosen` holds and why.
std::vector<std::string> describe_choices(const TrainingSpec& training, const ParallelismSpec& p,
                                          const PlanCandidate& chosen, std::size_t candidates, std::size_t fit) {
  const std::string rule = fmt::format("rule: fastest plan that fits, {} candidate{}, {} fit{}", candidates,
                                       candidates == 1 ? "" : "s", fit,
                                       fit == 0 ? "; none fits: least memory over capacity" : "");
  const auto& c = chosen.parallelism;
  std::vector<std::string> out;
  if (!training.micro_batch)
    out.push_back(fmt::format("/training/micro_batch = {} ({})", *chosen.training.micro_batch, rule));
  if (!p.sequence_parallel)
    out.push_back(fmt::format("/parallelism/sequence_parallel = {} (rule: tp > 1 and tp divides seq_len; "
                              "less activation memory, not slower unless TP collectives are latency-bound)",
                              *c.sequence_parallel));
  if (!p.zero) out.push_back(fmt::format("/parallelism/zero = {} ({})", *c.zero, rule));
  if (!p.virtual_stages) out.push_back(fmt::format("/parallelism/virtual_stages = {} ({})", *c.virtual_stages, rule));
  if (!p.schedule)
    out.push_back(fmt::format("/parallelism/schedule = {} ({}; 1f1b-interleaved exactly when virtual_stages > 1)",
                              trnsim::to_string(*c.schedule), rule));
  if (!p.recompute) out.push_back(fmt::format("/parallelism/recompute = {} ({})", trnsim::to_string(*c.recompute), rule));
  return out;
}

std::string label(const PlanCandidate& c) {
  const auto& p = c.parallelism;
  return fmt::format("micro_batch {} v {} recompute {} zero {} sp {}", *c.training.micro_batch, *p.virtual_stages,
                     trnsim::to_string(*p.recompute), *p.zero, *p.sequence_parallel);
}

// Rank of a recompute mode in the evaluation order: the cheapest compute first, so that a fast
// plan is found early and the compute lower bound prunes the heavier ones.
int evaluation_rank(const PlanCandidate& c) { return static_cast<int>(*c.parallelism.recompute); }

}  // namespace

std::vector<PlanCandidate> plan_candidates(const workload::ModelSpec& model, const TrainingSpec& training,
                                           const ParallelismSpec& parallelism) {
  // The count grows with v_max; take the largest v_max within the cap (v = 1 always stays).
  std::int64_t v_max = std::max<std::int64_t>(1, model.layers);
  std::vector<PlanCandidate> out = enumerate(model, training, parallelism, v_max);
  while (out.size() > kMaxPlanCandidates && v_max > 1) {
    --v_max;
    out = enumerate(model, training, parallelism, v_max);
  }
  if (out.size() > kMaxPlanCandidates) out.resize(kMaxPlanCandidates);
  return out;
}

PlanSearch search_plan(const StepInput& input) {
  const std::vector<PlanCandidate> candidates = plan_candidates(input.model, input.training, input.parallelism);
  PlanSearch search;
  search.candidates = candidates.size();

  // Memory first: cheap, and it decides which candidates are simulated at all.
  const double capacity = rank_memory_capacity(input.cluster);
  std::vector<std::size_t> fitting;
  std::size_t least_over = 0;
  double least_over_bytes = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto estimate = workload::estimate_memory(input.model, candidates[i].training, candidates[i].parallelism, input.software);
    const double over = estimate.peak().total() - capacity;
    if (over <= 0) fitting.push_back(i);
    if (over < least_over_bytes) {
      least_over_bytes = over;
      least_over = i;
    }
  }
  search.fit = fitting.size();
  search.chosen = fitting.empty() ? least_over : fitting.front();

  if (fitting.size() > 1) {
    StepInput analytic = input;
    analytic.network = net::NetworkModelKind::Analytic;
    std::vector<std::size_t> order = fitting;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return evaluation_rank(candidates[a]) < evaluation_rank(candidates[b]);
    });
    sim::Time best = sim::Time::max();
    for (const std::size_t i : order) {
      StepRun run = prepare_step(analytic, {candidates[i].training, candidates[i].parallelism, {}});
      // Durations become integer picoseconds in the engine: allow one picosecond per task so
      // that rounding cannot make the bound exceed a time the replay could reach.
      const double slack = 1e-12 * static_cast<double>(run.graph.tasks.size());
      const double bound = compute_lower_bound_s(run);
      if (search.run && bound - slack > best.to_seconds()) {
        spdlog::debug("plan search: candidate {} ({}): compute bound {:.6f} s > best {:.6f} s, not replayed", i,
                      label(candidates[i]), bound, best.to_seconds());
        continue;
      }
      replay_step(analytic, run);
      ++search.simulated;
      const sim::Time t = run.timeline.step_time;
      spdlog::debug("plan search: candidate {} ({}): step {:.6f} s (compute bound {:.6f} s), {} tasks", i,
                    label(candidates[i]), t.to_seconds(), bound, run.graph.tasks.size());
      if (t < best || (t == best && i < search.chosen)) {
        best = t;
        search.chosen = i;
        search.run = std::move(run);
      }
    }
  }

  const PlanCandidate& chosen = candidates[search.chosen];
  spdlog::debug("plan search: {} candidates, {} fit, {} replayed; chosen {} ({})", search.candidates, search.fit,
                search.simulated, search.chosen, label(chosen));
  search.resolved = {chosen.training, chosen.parallelism,
                     describe_choices(input.training, input.parallelism, chosen, search.candidates, search.fit)};
  return search;
}

}  // namespace trnsim::replay
