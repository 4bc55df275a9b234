// The plan product of one experiment (enumeration order in explore/sweep.hpp).
#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/explore/sweep.hpp"

namespace trnsim::explore {
namespace {

void require_at_least(const std::vector<std::int64_t>& values, std::int64_t low, const char* option) {
  for (std::int64_t v : values)
    if (v < low) throw InputError(fmt::format("{}: expected integers >= {}, found {}", option, low, v));
}

// The values of one axis: the list given, else the one value `fallback`.
template <typename T>
std::vector<T> axis_or(const std::vector<T>& given, T fallback) {
  return given.empty() ? std::vector<T>{fallback} : given;
}

}  // namespace

std::size_t plans_per_combination(const SweepAxes& a) {
  const auto n = [](std::size_t size) { return size == 0 ? std::size_t{1} : size; };
  return n(a.tp.size()) * n(a.pp.size()) * n(a.dp.size()) * n(a.micro_batch.size()) * n(a.virtual_stages.size()) *
         n(a.recompute.size()) * n(a.zero.size()) * n(a.sequence_parallel.size());
}

std::vector<PlanPoint> plan_points(const config::Experiment& ex, const SweepAxes& a) {
  require_at_least(a.tp, 1, "--tp");
  require_at_least(a.pp, 1, "--pp");
  require_at_least(a.dp, 1, "--dp");
  require_at_least(a.micro_batch, 1, "--micro-batch");
  require_at_least(a.virtual_stages, 1, "--virtual-stages");
  for (std::int64_t z : a.zero)
    if (z != 0 && z != 1) throw InputError(fmt::format("--zero: expected 0 or 1 (ZeRO-1), found {}", z));

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
