#include "trnsim/report/analysis/breakdown.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>


namespace trnsim::report {
namespace {

using workload::Category;
using workload::Stream;
using workload::TaskKind;

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

Breakdown breakdown_of(const workload::StepGraph& graph, const replay::Timeline& timeline,
                       std::int32_t rank, const std::vector<workload::TaskId>& tasks) {
  std::vector<Interval> intervals;
  intervals.reserve(tasks.size());
  for (const workload::TaskId t : tasks) {
    const auto& task = graph.tasks[t];
    const auto& span = timeline.spans[t];
    // A collective member counts from the call's start on the network: before it, the rank
    // waits for another member (another stage, the drain), which is no communication of its own.
    const sim::Time begin = task.kind == TaskKind::Collective ? span.active : span.start;
    if (span.end <= begin) continue;
    const Part part = task.kind == TaskKind::Compute ? compute_part(task.category) : comm_part(task.stream);
    intervals.push_back({begin, span.end, part, priority_of(part)});
  }
  // Sweep the elementary segments between all interval boundaries; each goes to the active
  // interval of best priority, or to the bubble. The boundaries in order: the begins come sorted
  // with the intervals, so only the ends are sorted apart and the two merged (half the sorting
  // of all boundaries at once; the same cuts).
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<sim::Time> ends;
  ends.reserve(intervals.size() + 2);
  ends.push_back(sim::Time::zero());
  ends.push_back(timeline.step_time);
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
    if (hi > timeline.step_time) break;
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

}  // namespace

Breakdown rank_breakdown(const workload::StepGraph& graph, const replay::Timeline& timeline,
                         std::int32_t rank) {
  std::vector<workload::TaskId> tasks;
  for (workload::TaskId t = 0; t < graph.tasks.size(); ++t) {
    if (graph.tasks[t].rank == rank) tasks.push_back(t);
  }
  return breakdown_of(graph, timeline, rank, tasks);
}

std::vector<Breakdown> rank_breakdowns(const workload::StepGraph& graph, const replay::Timeline& timeline) {
  const auto& ranks = graph.simulated_ranks;
  std::vector<std::vector<workload::TaskId>> by_rank(ranks.size());
  for (workload::TaskId t = 0; t < graph.tasks.size(); ++t) by_rank[graph.rank_slot(graph.tasks[t].rank)].push_back(t);
  std::vector<Breakdown> out;
  out.reserve(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) out.push_back(breakdown_of(graph, timeline, ranks[i], by_rank[i]));
  return out;
}

std::size_t bottleneck_of(const std::vector<Breakdown>& breakdowns) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < breakdowns.size(); ++i) {
    if (breakdowns[i].compute() > breakdowns[best].compute()) best = i;
  }
  return best;
}

Breakdown step_breakdown(const workload::StepGraph& graph, const replay::Timeline& timeline) {
  const std::vector<Breakdown> all = rank_breakdowns(graph, timeline);
  return all.empty() ? Breakdown{} : all[bottleneck_of(all)];
}

}  // namespace trnsim::report
