#pragma once
// Where one rank's step time goes. Every instant of [0, step time] is given to exactly one part,
// so the parts add up to the step time: compute by category when the compute stream is busy;
// otherwise the communication the rank has on the network (TP before pipeline before DP, the
// order in which a waiting compute stream most directly depends on them); otherwise the pipeline
// bubble. A collective is communication only from its start on the network (Span::active) to its
// end: a member that reached the call earlier waits for the last member to arrive (the drain of
// the pipeline, a slower stage), and that wait is charged to what it waits for, the bubble.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trnsim/replay/timeline.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::report {

enum class Part : std::uint8_t {
  Forward, Backward, Recompute, Optimizer,  // compute stream busy
  ExposedTp, ExposedPp, ExposedDp,          // compute idle, rank communicating on the network
  Bubble,                                   // compute idle, nothing to do or waiting for a peer
};
inline constexpr int kPartCount = 8;
std::string_view part_name(Part p);  // "forward", ..., "exposed_tp_comm", ..., "pipeline_bubble"

struct Breakdown {
  std::int32_t rank = 0;
  std::array<double, kPartCount> seconds{};  // indexed by Part; sums to the step time
  double total() const;
  double compute() const;  // forward + backward + recompute + optimizer
};

// Contract: the breakdown of `rank` over [0, timeline.step_time]. Cost: O(n) in the rank's tasks
// when each of its streams' intervals come in time order in task-id order (build_step's graphs),
// else O(n log n); O(all tasks) to find the rank's.
Breakdown rank_breakdown(const workload::StepGraph& graph, const replay::Timeline& timeline, std::int32_t rank);

// Contract: the breakdown of every simulated rank, indexed like graph.simulated_ranks. Cost: one
// pass over the tasks, then each rank's sweep as rank_breakdown's.
std::vector<Breakdown> rank_breakdowns(const workload::StepGraph& graph, const replay::Timeline& timeline);

// The index of the breakdown with the most compute time; ties go to the lowest index. 0 when empty.
std::size_t bottleneck_of(const std::vector<Breakdown>& breakdowns);

// Contract: each simulated rank's compute time in picoseconds, exactly (indexed like
// graph.simulated_ranks): the lengths of its compute intervals, which is what its breakdown's
// compute parts add up to when those intervals do not overlap. nullopt when they may: a compute
// task off the compute stream, or a rank's compute tasks not in time order in task-id order (a
// trace's graph may be so; build_step's never are). O(tasks), no sweep.
std::optional<std::vector<sim::Time>> rank_compute_times(const workload::StepGraph& graph,
                                                         const replay::Timeline& timeline);

// The index of the greatest time; ties go to the lowest index. 0 when empty.
std::size_t most_compute(const std::vector<sim::Time>& times);

// Contract: the breakdown of the simulated rank with the most compute time (the bottleneck stage);
// ties go to the lowest rank. The rank is chosen on rank_compute_times where they apply (exact:
// ranks alike to the picosecond tie, whatever the rounding of their parts' seconds), else on the
// breakdowns' compute(). Cost: one pass over the tasks and one rank_breakdown; a rank_breakdown
// per simulated rank where rank_compute_times does not apply.
Breakdown step_breakdown(const workload::StepGraph& graph, const replay::Timeline& timeline);

}  // namespace trnsim::report
