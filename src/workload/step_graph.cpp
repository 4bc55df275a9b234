#include "trnsim/workload/step_graph.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::workload {

void throw_unsimulated_rank(std::int32_t rank) {
  throw InternalError(fmt::format("StepGraph: task on rank {} that is not simulated", rank));
}

void throw_bad_group_set(std::uint32_t set, std::size_t sets) {
  throw InternalError(fmt::format("StepGraph: collective on group set {} of {}", set, sets));
}

void StepGraph::index_ranks() {
  slot_by_rank.clear();
  const auto& ranks = simulated_ranks;
  // Strictly ascending, as rank_slot's search assumes (a repeated rank would find its first copy
  // there and its last here).
  const auto not_ascending = [](std::int32_t a, std::int32_t b) { return a >= b; };
  if (ranks.empty() || ranks.front() < 0 || std::adjacent_find(ranks.begin(), ranks.end(), not_ascending) != ranks.end())
    return;
  // A table of the job's real ranks, up to 4 Mi of them, or of about 16 per simulated rank:
  // symmetric simulation spreads its ranks over the whole job (at 65,536 chips the last is rank
  // 245,775 of 262,144), where each per-task lookup searching was a tenth of a replay's passes;
  // a trace may number a few ranks sparsely.
  const auto last = static_cast<std::size_t>(ranks.back());
  const std::size_t job = std::min<std::size_t>(static_cast<std::size_t>(std::max(total_ranks, 0)), std::size_t{1} << 22);
  if (last >= std::max(16 * ranks.size() + 65536, job)) return;
  constexpr std::uint32_t kNone = 0xffffffffu;
  slot_by_rank.assign(last + 1, kNone);
  for (std::size_t i = 0; i < ranks.size(); ++i) slot_by_rank[static_cast<std::size_t>(ranks[i])] = static_cast<std::uint32_t>(i);
}

CallMembers call_members(const StepGraph& graph) {
  CallMembers m;
  const std::size_t calls = graph.calls;
  m.begin.assign(calls + 1, 0);
  for (const Task& t : graph.tasks) {
    if (t.kind != TaskKind::Collective) continue;
    if (t.call >= calls) throw InternalError(fmt::format("StepGraph: call {} of {} calls", t.call, calls));
    ++m.begin[t.call + 1];
  }
  for (std::size_t c = 0; c < calls; ++c) m.begin[c + 1] += m.begin[c];
  m.tasks.resize(m.begin[calls]);
  std::vector<std::uint32_t> fill(m.begin.begin(), m.begin.end() - 1);
  for (TaskId t = 0; t < graph.tasks.size(); ++t) {
    if (graph.tasks[t].kind == TaskKind::Collective) m.tasks[fill[graph.tasks[t].call]++] = t;
  }
  return m;
}

}  // namespace trnsim::workload
