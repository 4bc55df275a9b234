#pragma once
// The critical path of a step: the chain of tasks and transfers that sets the step time. It is
// found by walking back from the task that ends last. At each task the walk takes the predecessor
// whose end most determines the task's start: one of its dependencies or the previous task on
// the same (rank, stream), whichever ended last (a dependency on ties). A collective's segment is
// its time on the network only (Span::active, when its last member arrived, to its end), charged
// to its communication category; the walk continues from that last member, so the time earlier
// members spent waiting at the call is on the path as what the last member was doing (in a
// pipeline drain, stage 0's backward pass), counted once. Where the chosen predecessor ended
// before the task started (a task ready at time 0 that started later, or a cycle of zero-length
// tasks the walk refuses to revisit), the gap is its own "waiting" segment. The segments
// therefore tile [0, step time]: the path's length is the step time.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/replay/timeline.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::report {

enum class PathCategory : std::uint8_t {
  Forward, Backward, Recompute, Optimizer,  // compute
  TpComm, PpSendRecv, DpComm,               // communication
  Waiting,                                  // gaps: nothing on the path runs
};
inline constexpr int kPathCategoryCount = 8;
// "forward", "backward", "recompute", "optimizer", "tp_comm", "pp_send_recv", "dp_comm", "waiting"
std::string_view path_category_name(PathCategory c);

struct PathSegment {
  sim::Time begin, end;
  PathCategory category = PathCategory::Waiting;
  std::int64_t task = -1;   // TaskId; -1 for a waiting gap
  std::int32_t rank = 0;    // the task's rank; a gap: the rank of the task it delays
  std::int32_t stage = 0;
};

// Seconds the path spends in one rank (pipeline stage), gaps included.
struct RankPathTime {
  std::int32_t rank = 0;
  std::int32_t stage = 0;
  double seconds = 0;
};

// Path time of one kind of task: compute by Work name ("attn_fwd"), collectives by category and
// operation ("tp_comm all-reduce"), transfers "pp_send_recv", gaps "waiting".
struct PathContributor {
  std::string name;
  PathCategory category = PathCategory::Waiting;
  double seconds = 0;
  std::int64_t count = 0;  // segments of this kind on the path
};

struct CriticalPath {
  std::vector<PathSegment> segments;                 // in time order
  // segments.size(); a fast-forwarded report (fast_forward.hpp) has this count with `segments` empty.
  std::int64_t segment_count = 0;
  std::array<double, kPathCategoryCount> seconds{};  // by PathCategory; sums to length_s
  std::vector<RankPathTime> by_rank;                 // ascending rank, ranks on the path only
  std::vector<PathContributor> top;                  // by seconds, descending (name on ties)
  double length_s = 0;                               // sum of all segments = step time
};

// Contract: the critical path of `timeline` (produced by replay::execute on `graph`); `top_n`
// bounds CriticalPath::top. Deterministic. Cost: O((tasks + edges) log tasks), O(tasks) memory.
CriticalPath critical_path(const workload::StepGraph& graph, const replay::Timeline& timeline,
                           std::size_t top_n = 10);

// Contract: the path of a step M1 + k periods long from the paths of the M1 (`a`) and M2 (`b`)
// replays (report/analysis/fast_forward.hpp), both summarised with every contributor (top_n
// unbounded): counts and seconds per category, rank and contributor moved k times their change,
// contributors re-ranked and cut to `top_n`, `segments` empty, length `length_s`. O(contributors log).
CriticalPath extrapolate_path(const CriticalPath& a, const CriticalPath& b, std::int64_t k, double length_s,
                              std::size_t top_n = 10);

}  // namespace trnsim::report
