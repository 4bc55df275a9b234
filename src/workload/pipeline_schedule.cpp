#include "trnsim/workload/pipeline_schedule.hpp"

#include <algorithm>

namespace trnsim::workload {
namespace {

std::vector<ScheduleUnit> one_f_one_b(std::int64_t warmup, std::int64_t total, std::int64_t pp, std::int64_t v) {
  // Unit k -> (micro-batch, chunk) as Megatron-LM's interleaved schedule maps it; with v = 1 this is
  // micro-batch k, chunk 0.
  auto unit = [&](std::int64_t k, bool forward) {
    const std::int64_t group = pp * v;
    std::int64_t chunk = (k % group) / pp;
    if (!forward) chunk = v - 1 - chunk;
    const std::int64_t mb = (k / group) * pp + k % pp;
    return ScheduleUnit{forward, static_cast<std::int32_t>(v == 1 ? k : mb), static_cast<std::int32_t>(chunk)};
  };
  std::vector<ScheduleUnit> out;
  out.reserve(static_cast<std::size_t>(2 * total));
  for (std::int64_t k = 0; k < warmup; ++k) out.push_back(unit(k, true));
  for (std::int64_t i = 0; i < total - warmup; ++i) {
    out.push_back(unit(warmup + i, true));
    out.push_back(unit(i, false));
  }
  for (std::int64_t i = total - warmup; i < total; ++i) out.push_back(unit(i, false));
  return out;
}

}  // namespace

std::vector<ScheduleUnit> stage_schedule(PipelineSchedule schedule, std::int64_t pp, std::int64_t stage,
                                         std::int64_t micro_batches, std::int64_t virtual_stages) {
  const std::int64_t m = micro_batches;
  if (schedule == PipelineSchedule::GPipe) {
    std::vector<ScheduleUnit> out;
    out.reserve(static_cast<std::size_t>(2 * m));
    for (std::int64_t i = 0; i < m; ++i) out.push_back({true, static_cast<std::int32_t>(i), 0});
    for (std::int64_t i = 0; i < m; ++i) out.push_back({false, static_cast<std::int32_t>(i), 0});
    return out;
  }
  if (schedule == PipelineSchedule::OneFOneB || virtual_stages == 1) {
    return one_f_one_b(std::min(pp - stage - 1, m), m, pp, 1);
  }
  const std::int64_t total = m * virtual_stages;
  const std::int64_t warmup = std::min((pp - stage - 1) * 2 + (virtual_stages - 1) * pp, total);
  return one_f_one_b(warmup, total, pp, virtual_stages);
}

std::int64_t peak_units_in_flight(const std::vector<ScheduleUnit>& order) {
  std::int64_t live = 0, peak = 0;
  for (const auto& u : order) {
    live += u.forward ? 1 : -1;
    peak = std::max(peak, live);
  }
  return peak;
}

double peak_weight_in_flight(const std::vector<ScheduleUnit>& order, const std::vector<double>& chunk_weight) {
  double live = 0, peak = 0;
  for (const auto& u : order) {
    const double w = chunk_weight.at(static_cast<std::size_t>(u.chunk));
    live += u.forward ? w : -w;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace trnsim::workload
