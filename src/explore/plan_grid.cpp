// The plan product of one experiment (enumeration order in explore/sweep.hpp).
#include <algorithm>

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/explore/sweep.hpp"

namespace trnsim::explore {
namespace {

// A parallel degree or batch split: the field tables' range (config/workload_fields.cpp), so
// that no product of degrees can overflow.
constexpr std::int64_t kMaxDegree = std::int64_t{1} << 20;

void require_at_least(const std::vector<std::int64_t>& values, std::int64_t low, const char* option) {
  for (std::int64_t v : values)
    if (v < low || v > kMaxDegree)
      throw InputError(fmt::format("{}: expected integers in [{}, {}], found {}", option, low, kMaxDegree, v));
}

// The values of one axis: the list given, else the one value `fallback`.
template <typename T>
std::vector<T> axis_or(const std::vector<T>& given, T fallback) {
  return given.empty() ? std::vector<T>{fallback} : given;
}

// A value listed twice would simulate the same plans twice and rank them side by side. `name`
// spells a value as the option takes it.
template <typename T, typename Name>
void require_distinct(const std::vector<T>& values, const char* option, Name name) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[j] == values[i])
        throw InputError(fmt::format("{}: expected each value once, found {} listed twice", option, name(values[i])));
}

void check_axes(const SweepAxes& a) {
  require_at_least(a.tp, 1, "--tp");
  require_at_least(a.pp, 1, "--pp");
  require_at_least(a.dp, 1, "--dp");
  require_at_least(a.micro_batch, 1, "--micro-batch");
  require_at_least(a.virtual_stages, 1, "--virtual-stages");
  for (std::int64_t z : a.zero)
    if (z < 0 || z > 3) throw InputError(fmt::format("--zero: expected 0, 1, 2 or 3 (FSDP), found {}", z));
  const auto number = [](std::int64_t v) { return std::to_string(v); };
  require_distinct(a.tp, "--tp", number);
  require_distinct(a.pp, "--pp", number);
  require_distinct(a.dp, "--dp", number);
  require_distinct(a.micro_batch, "--micro-batch", number);
  require_distinct(a.virtual_stages, "--virtual-stages", number);
  require_distinct(a.zero, "--zero", number);
  require_distinct(a.recompute, "--recompute", [](workload::Recompute r) { return workload::recompute_text(r); });
  require_distinct(a.sequence_parallel, "--sp", [](bool on) { return std::string(on ? "on" : "off"); });
}

}  // namespace

std::size_t plans_per_combination(const SweepAxes& a) {
  const auto n = [](std::size_t size) { return size == 0 ? std::size_t{1} : size; };
  return n(a.tp.size()) * n(a.pp.size()) * n(a.dp.size()) * n(a.micro_batch.size()) * n(a.virtual_stages.size()) *
         n(a.recompute.size()) * n(a.zero.size()) * n(a.sequence_parallel.size());
}

std::vector<PlanPoint> plan_points(const config::Experiment& ex, const SweepAxes& a) {
  check_axes(a);

  const workload::TrainingSpec& t0 = ex.training;
  const workload::ParallelismSpec& p0 = ex.parallelism;
  // Optional axes: an empty list keeps the experiment's value, set or null.
  using OptInt = std::optional<std::int64_t>;
  const auto optional_axis = [](const std::vector<std::int64_t>& given, OptInt fallback) {
    std::vector<OptInt> out;
    for (std::int64_t v : given) out.emplace_back(v);
    if (out.empty()) out.push_back(fallback);
    return out;
  };
  const std::vector<std::int64_t> tps = axis_or(a.tp, p0.tp), pps = axis_or(a.pp, p0.pp);
  const std::vector<OptInt> dps = optional_axis(a.dp, std::nullopt);
  const std::vector<OptInt> mbs = optional_axis(a.micro_batch, t0.micro_batch);
  const std::vector<OptInt> vs = optional_axis(a.virtual_stages, p0.virtual_stages);
  const std::vector<OptInt> zeros = optional_axis(a.zero, p0.zero);
  std::vector<std::optional<workload::Recompute>> recomputes(a.recompute.begin(), a.recompute.end());
  if (recomputes.empty()) recomputes.push_back(p0.recompute);
  std::vector<std::optional<bool>> sps(a.sequence_parallel.begin(), a.sequence_parallel.end());
  if (sps.empty()) sps.push_back(p0.sequence_parallel);

  std::vector<PlanPoint> points;
  points.reserve(plans_per_combination(a));
  for (std::int64_t tp : tps)
    for (std::int64_t pp : pps)
      for (const OptInt& dp : dps)
        for (const OptInt& mb : mbs)
          for (const OptInt& v : vs)
            for (const auto& recompute : recomputes)
              for (const OptInt& zero : zeros)
                for (const auto& sp : sps) {
                  PlanPoint p;
                  p.index = points.size();
                  p.dp = dp;
                  p.training = t0;
                  p.training.micro_batch = mb;
                  p.parallelism = p0;
                  p.parallelism.tp = tp;
                  p.parallelism.pp = pp;
                  p.parallelism.virtual_stages = v;
                  p.parallelism.recompute = recompute;
                  p.parallelism.zero = zero;
                  p.parallelism.sequence_parallel = sp;
                  // A swept virtual_stages decides the schedule, as the plan rule does for a null
                  // one: interleaved above 1, else the file's (1f1b when null).
                  if (!a.virtual_stages.empty())
                    p.parallelism.schedule = *v > 1 ? std::optional(workload::PipelineSchedule::Interleaved)
                                                    : (p0.schedule == workload::PipelineSchedule::Interleaved
                                                           ? std::nullopt
                                                           : p0.schedule);
                  points.push_back(std::move(p));
                }
  return points;
}

}  // namespace trnsim::explore

namespace trnsim::explore {
namespace {

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace

std::vector<PlanPoint> search_points(const config::Experiment& ex, const SweepAxes& a) {
  check_axes(a);

  const std::int64_t ranks = ex.cluster.ranks();
  const std::int64_t layers = ex.model.layers;
  const std::int64_t batch = ex.training.global_batch;
  const std::vector<std::int64_t> all_ranks = divisors(ranks);
  const std::vector<std::int64_t> tps = a.tp.empty() ? all_ranks : a.tp;
  std::vector<workload::Recompute> recomputes = a.recompute;
  if (recomputes.empty())
    recomputes = {workload::Recompute::None, workload::Recompute::Selective, workload::Recompute::Full};
  std::vector<std::optional<bool>> sps(a.sequence_parallel.begin(), a.sequence_parallel.end());
  if (sps.empty()) sps.push_back(ex.parallelism.sequence_parallel);

  std::vector<PlanPoint> points;
  for (std::int64_t tp : tps) {
    std::vector<std::int64_t> pps = a.pp;
    if (pps.empty())
      for (std::int64_t pp : all_ranks)
        if (ranks % tp == 0 && (ranks / tp) % pp == 0 && pp <= layers) pps.push_back(pp);
    if (pps.empty()) pps.push_back(1);  // a given tp that does not divide the ranks: one point says so
    for (std::int64_t pp : pps) {
      std::vector<std::optional<std::int64_t>> dps(a.dp.begin(), a.dp.end());
      if (dps.empty()) dps.push_back(std::nullopt);
      for (const auto& dp : dps) {
        const std::int64_t replicas = dp.value_or(tp * pp > 0 && ranks % (tp * pp) == 0 ? ranks / (tp * pp) : 0);
        std::vector<std::int64_t> mbs = a.micro_batch;
        if (mbs.empty() && replicas > 0 && batch % replicas == 0) mbs = divisors(batch / replicas);
        if (mbs.empty()) mbs.push_back(1);  // no batch split runs: one invalid point says why
        for (std::int64_t mb : mbs) {
          std::vector<std::int64_t> vs = a.virtual_stages;
          if (vs.empty()) {
            vs.push_back(1);
            // Megatron-LM's interleaving: pp > 1, v dividing the layers per stage, the
            // micro-batches per pipeline a multiple of pp.
            const std::int64_t micro_batches = replicas > 0 ? batch / (replicas * mb) : 0;
            if (pp > 1 && layers % pp == 0 && micro_batches % pp == 0)
              for (std::int64_t v : divisors(layers / pp))
                if (v > 1) vs.push_back(v);
          }
          for (std::int64_t v : vs)
            for (workload::Recompute recompute : recomputes) {
              std::vector<std::int64_t> zeros = a.zero;
              if (zeros.empty()) zeros = replicas > 1 ? std::vector<std::int64_t>{0, 1} : std::vector<std::int64_t>{0};
              for (std::int64_t zero : zeros)
                for (const auto& sp : sps) {
                  PlanPoint p;
                  p.index = points.size();
                  p.dp = dp;
                  p.training = ex.training;
                  p.training.micro_batch = mb;
                  p.parallelism = ex.parallelism;
                  p.parallelism.tp = tp;
                  p.parallelism.pp = pp;
                  p.parallelism.virtual_stages = v;
                  const auto file_schedule = ex.parallelism.schedule;
                  p.parallelism.schedule =
                      v > 1 ? std::optional(workload::PipelineSchedule::Interleaved)
                            : (file_schedule == workload::PipelineSchedule::Interleaved ? std::nullopt : file_schedule);
                  p.parallelism.recompute = recompute;
                  p.parallelism.zero = zero;
                  p.parallelism.sequence_parallel = sp;
                  points.push_back(std::move(p));
                }
            }
        }
      }
    }
  }
  return points;
}

}  // namespace trnsim::explore
