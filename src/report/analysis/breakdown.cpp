#include "trnsim/report/analysis/breakdown.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

namespace trnsim::report {
namespace {

using workload::Category;
using workload::Stream;
using workload::TaskKind;

constexpr std::size_t kLanes = static_cast<std::size_t>(workload::kStreamCount);

// An interval of one rank's activity and the part it would be charged to, with a priority:
// a lower value wins where intervals overlap.
struct Interval {
  sim::Time begin, end;
  Part part;
  int priority;
};

Part compute_part(Category c) {
  switch (c) {
    case Category::Backward: return Part::Backward;
    case Category::Recompute: return Part::Recompute;
    case Category::Optimizer: return Part::Optimizer;
    default: return Part::Forward;
  }
}

Part comm_part(Stream s) {
  switch (s) {
    case Stream::TpComm: return Part::ExposedTp;
    case Stream::PpComm: return Part::ExposedPp;
    default: return Part::ExposedDp;
  }
}

int priority_of(Part p) {
  switch (p) {
    case Part::ExposedTp: return 1;
    case Part::ExposedPp: return 2;
    case Part::ExposedDp: return 3;
    default: return 0;  // compute
  }
}

}  // namespace

std::string_view part_name(Part p) {
  switch (p) {
    case Part::Forward: return "forward";
    case Part::Backward: return "backward";
    case Part::Recompute: return "recompute";
    case Part::Optimizer: return "optimizer";
    case Part::ExposedTp: return "exposed_tp_comm";
    case Part::ExposedPp: return "pipeline_send_recv";
    case Part::ExposedDp: return "exposed_dp_comm";
    case Part::Bubble: return "pipeline_bubble";
  }
  return "?";
}

double Breakdown::total() const { return std::accumulate(seconds.begin(), seconds.end(), 0.0); }

double Breakdown::compute() const {
  return seconds[static_cast<int>(Part::Forward)] + seconds[static_cast<int>(Part::Backward)] +
         seconds[static_cast<int>(Part::Recompute)] + seconds[static_cast<int>(Part::Optimizer)];
}

namespace {

// The interval a task occupies in the breakdown, or nullopt when it is empty. A collective
// member counts from the call's start on the network: before it, the rank waits for another
// member (another stage, the drain), which is no communication of its own.
std::optional<Interval> interval_of(const workload::Task& task, const replay::Span& span) {
  const sim::Time begin = task.kind == TaskKind::Collective ? span.active : span.start;
  if (span.end <= begin) return std::nullopt;
  const Part part = task.kind == TaskKind::Compute ? compute_part(task.category) : comm_part(task.stream);
  return Interval{begin, span.end, part, priority_of(part)};
}

// Sweep the elementary segments between all interval boundaries; each goes to the active interval
// of best priority, or to the bubble. Any intervals, in any order: O(n log n).
Breakdown sweep_any(std::vector<Interval> intervals, sim::Time step_time, std::int32_t rank) {
  // The boundaries in order: the begins come sorted with the intervals, so only the ends are
  // sorted apart and the two merged (half the sorting of all boundaries at once; the same cuts).
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<sim::Time> ends;
  ends.reserve(intervals.size() + 2);
  ends.push_back(sim::Time::zero());
  ends.push_back(step_time);
  for (const auto& iv : intervals) ends.push_back(iv.end);
  std::sort(ends.begin(), ends.end());
  std::vector<sim::Time> cuts;
  cuts.reserve(2 * intervals.size() + 2);
  std::size_t e = 0;
  for (const auto& iv : intervals) {
    for (; e < ends.size() && ends[e] <= iv.begin; ++e) cuts.push_back(ends[e]);
    cuts.push_back(iv.begin);
  }
  cuts.insert(cuts.end(), ends.begin() + static_cast<std::ptrdiff_t>(e), ends.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());

  Breakdown out;
  out.rank = rank;
  std::vector<const Interval*> active;
  std::size_t next = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const sim::Time lo = cuts[i], hi = cuts[i + 1];
    if (hi > step_time) break;
    std::erase_if(active, [lo](const Interval* iv) { return iv->end <= lo; });
    while (next < intervals.size() && intervals[next].begin <= lo) active.push_back(&intervals[next++]);
    Part part = Part::Bubble;
    int best = 1 << 30;
    for (const Interval* iv : active) {
      if (iv->end > lo && iv->priority < best) {
        best = iv->priority;
        part = iv->part;
      }
    }
    out.seconds[static_cast<int>(part)] += (hi - lo).to_seconds();
  }
  return out;
}

// The same sweep where each stream's intervals are disjoint and in time order (a stream runs one
// task at a time, and build_step emits a stream's tasks in the order they run): at any moment at
// most one interval per stream is active, so the next cut is the least next boundary of the
// streams, and nothing is sorted. The cuts, and the order the segments are added in, are
// sweep_any's, so the sums are the same to the bit. O(n x streams).
Breakdown sweep_streams(const std::array<std::vector<Interval>, kLanes>& lanes, sim::Time step_time,
                        std::int32_t rank) {
  Breakdown out;
  out.rank = rank;
  std::array<std::size_t, kLanes> at{};  // per lane: its first interval that ends after `t`
  sim::Time t = sim::Time::zero();
  while (t < step_time) {
    sim::Time next = step_time;
    Part part = Part::Bubble;
    int best = 1 << 30;
    for (std::size_t s = 0; s < kLanes; ++s) {
      if (at[s] == lanes[s].size()) continue;
      const Interval& iv = lanes[s][at[s]];
      if (iv.begin > t) {
        next = std::min(next, iv.begin);
        continue;
      }
      next = std::min(next, iv.end);
      if (iv.priority < best) {
        best = iv.priority;
        part = iv.part;
      }
    }
    out.seconds[static_cast<int>(part)] += (next - t).to_seconds();
    t = next;
    for (std::size_t s = 0; s < kLanes; ++s) {
      if (at[s] < lanes[s].size() && lanes[s][at[s]].end <= t) ++at[s];
    }
  }
  return out;
}

// One rank's intervals by stream, and whether sweep_streams applies: each stream's disjoint and
// in time order, and compute only on the compute stream (else two compute parts could tie on
// priority, which sweep_any breaks by begin). A trace's graph may not be; build_step's are.
struct Lanes {
  std::array<std::vector<Interval>, kLanes> by_stream;
  bool ordered = true;
  void add(const workload::Task& task, const Interval& iv) {
    auto& lane = by_stream[static_cast<std::size_t>(task.stream)];
    if ((!lane.empty() && iv.begin < lane.back().end) ||
        (task.kind == TaskKind::Compute && task.stream != Stream::Compute)) {
      ordered = false;
    }
    lane.push_back(iv);
  }
};

constexpr std::size_t kNotWanted = ~std::size_t{0};

// The breakdowns of `ranks`; index_of(rank) is a task's rank's index in `ranks`, or kNotWanted.
template <class IndexOf>
std::vector<Breakdown> breakdowns_of(const workload::StepGraph& graph, const replay::Timeline& timeline,
                                     std::span<const std::int32_t> ranks, IndexOf index_of) {
  std::vector<Lanes> lanes(ranks.size());
  // Sized first: every rank's four lanes grown side by side scattered the heap (twice the page
  // faults of a sweep's plan).
  std::vector<std::size_t> sizes(ranks.size() * kLanes, 0);
  for (const workload::Task& task : graph.tasks) {
    if (const std::size_t i = index_of(task.rank); i != kNotWanted) ++sizes[i * kLanes + static_cast<std::size_t>(task.stream)];
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) lanes[i / kLanes].by_stream[i % kLanes].reserve(sizes[i]);
  for (workload::TaskId t = 0; t < graph.tasks.size(); ++t) {
    const workload::Task& task = graph.tasks[t];
    const std::size_t i = index_of(task.rank);
    if (i == kNotWanted) continue;
    if (const auto iv = interval_of(task, timeline.spans[t])) lanes[i].add(task, *iv);
  }
  // The ranks whose lanes are not in time order (a trace's): their intervals again in task order
  // (sweep_any's tie-break among equal begins depends on it), in one more pass for all of them.
  std::vector<std::vector<Interval>> in_task_order(ranks.size());
  if (std::any_of(lanes.begin(), lanes.end(), [](const Lanes& l) { return !l.ordered; })) {
    for (workload::TaskId t = 0; t < graph.tasks.size(); ++t) {
      const std::size_t i = index_of(graph.tasks[t].rank);
      if (i == kNotWanted || lanes[i].ordered) continue;
      if (const auto iv = interval_of(graph.tasks[t], timeline.spans[t])) in_task_order[i].push_back(*iv);
    }
  }
  std::vector<Breakdown> out;
  out.reserve(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out.push_back(lanes[i].ordered ? sweep_streams(lanes[i].by_stream, timeline.step_time, ranks[i])
                                   : sweep_any(std::move(in_task_order[i]), timeline.step_time, ranks[i]));
  }
  return out;
}

}  // namespace

Breakdown rank_breakdown(const workload::StepGraph& graph, const replay::Timeline& timeline,
                         std::int32_t rank) {
  const auto index_of = [rank](std::int32_t r) { return r == rank ? std::size_t{0} : kNotWanted; };
  return breakdowns_of(graph, timeline, std::span<const std::int32_t>(&rank, 1), index_of).front();
}

std::vector<Breakdown> rank_breakdowns(const workload::StepGraph& graph, const replay::Timeline& timeline) {
  const auto index_of = [&graph](std::int32_t r) { return graph.rank_slot(r); };
  return breakdowns_of(graph, timeline, graph.simulated_ranks, index_of);
}

std::size_t bottleneck_of(const std::vector<Breakdown>& breakdowns) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < breakdowns.size(); ++i) {
    if (breakdowns[i].compute() > breakdowns[best].compute()) best = i;
  }
  return best;
}

std::optional<std::vector<sim::Time>> rank_compute_times(const workload::StepGraph& graph,
                                                         const replay::Timeline& timeline) {
  std::vector<sim::Time> total(graph.simulated_ranks.size(), sim::Time::zero());
  std::vector<sim::Time> last_end(graph.simulated_ranks.size(), sim::Time::zero());
  for (workload::TaskId t = 0; t < graph.tasks.size(); ++t) {
    const workload::Task& task = graph.tasks[t];
    if (task.kind != TaskKind::Compute) continue;
    if (task.stream != Stream::Compute) return std::nullopt;
    const auto iv = interval_of(task, timeline.spans[t]);
    if (!iv) continue;
    const std::size_t i = graph.rank_slot(task.rank);
    if (iv->begin < last_end[i]) return std::nullopt;
    last_end[i] = iv->end;
    total[i] += iv->end - iv->begin;
  }
  return total;
}

std::size_t most_compute(const std::vector<sim::Time>& times) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (times[i] > times[best]) best = i;
  }
  return best;
}

Breakdown step_breakdown(const workload::StepGraph& graph, const replay::Timeline& timeline) {
  if (graph.simulated_ranks.empty()) return Breakdown{};
  // The rank from exact times, then its sweep alone: the other ranks' sweeps were nine tenths
  // of a sweep's analysis of llama3.1-405b-trn2u (16 simulated ranks).
  if (const auto times = rank_compute_times(graph, timeline))
    return rank_breakdown(graph, timeline, graph.simulated_ranks[most_compute(*times)]);
  const std::vector<Breakdown> all = rank_breakdowns(graph, timeline);
  return all[bottleneck_of(all)];
}

}  // namespace trnsim::report
