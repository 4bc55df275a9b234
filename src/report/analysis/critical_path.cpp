#include "trnsim/report/analysis/critical_path.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/core.h>

namespace trnsim::report {
namespace {

using workload::Category;
using workload::StepGraph;
using workload::Task;
using workload::TaskId;
using workload::TaskKind;

constexpr std::uint32_t kNone = 0xffffffffu;

PathCategory category_of(const Task& task) {
  switch (task.category) {
    case Category::Forward: return PathCategory::Forward;
    case Category::Backward: return PathCategory::Backward;
    case Category::Recompute: return PathCategory::Recompute;
    case Category::Optimizer: return PathCategory::Optimizer;
    case Category::TpComm: return PathCategory::TpComm;
    case Category::DpComm: return PathCategory::DpComm;
    case Category::PpComm: return PathCategory::PpSendRecv;
    case Category::EpComm: return PathCategory::TpComm;  // in-layer communication, like TP's
    case Category::CpComm: return PathCategory::TpComm;
  }
  return PathCategory::Waiting;
}

// Predecessors of every task as CSR (the graph stores successors only).
struct Predecessors {
  std::vector<std::uint32_t> begin;
  std::vector<TaskId> ids;
};

Predecessors predecessors(const StepGraph& g) {
  Predecessors p;
  p.begin.assign(g.tasks.size() + 1, 0);
  for (const TaskId s : g.successors) ++p.begin[s + 1];
  for (std::size_t t = 0; t < g.tasks.size(); ++t) p.begin[t + 1] += p.begin[t];
  p.ids.assign(g.successors.size(), 0);
  std::vector<std::uint32_t> fill(p.begin.begin(), p.begin.end() - 1);
  for (TaskId t = 0; t < g.tasks.size(); ++t) {
    for (std::uint32_t i = g.tasks[t].succ_begin; i < g.tasks[t].succ_end; ++i) {
      p.ids[fill[g.successors[i]]++] = t;  // ascending t: predecessors listed in id order
    }
  }
  return p;
}

// The task that held the same (rank, stream) just before each task (kNone for the first): each
// (rank, stream)'s tasks in (start, end, id) order. Grouped by a counting pass over the simulated
// ranks' slots (ascending with the rank), so the sort compares compact entries of one stream
// only, not the whole graph's tasks.
std::vector<std::uint32_t> stream_previous(const StepGraph& g, const replay::Timeline& tl) {
  constexpr std::size_t kStreams = static_cast<std::size_t>(workload::kStreamCount);
  const auto key = [&](const Task& t) { return g.rank_slot(t.rank) * kStreams + static_cast<std::size_t>(t.stream); };
  std::vector<std::uint32_t> begin(g.simulated_ranks.size() * kStreams + 1, 0);
  for (const Task& t : g.tasks) ++begin[key(t) + 1];
  for (std::size_t k = 1; k < begin.size(); ++k) begin[k] += begin[k - 1];
  struct Entry {
    std::int64_t start, end;
    TaskId id;
    bool operator<(const Entry& o) const { return std::tie(start, end, id) < std::tie(o.start, o.end, o.id); }
  };
  std::vector<Entry> entries(g.tasks.size());
  std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
  for (TaskId t = 0; t < g.tasks.size(); ++t)
    entries[fill[key(g.tasks[t])]++] = {tl.spans[t].start.picoseconds(), tl.spans[t].end.picoseconds(), t};
  std::vector<std::uint32_t> prev(g.tasks.size(), kNone);
  for (std::size_t k = 0; k + 1 < begin.size(); ++k) {
    const auto first = entries.begin() + begin[k], last = entries.begin() + begin[k + 1];
    // Filled in id order, a stream's entries are usually in run order already (the builder emits
    // a stream's tasks in program order): checking is O(n), sorting them again was 6 % of a
    // llama3.1-405b-trn2u `run`'s instructions.
    if (!std::is_sorted(first, last)) std::sort(first, last);
    for (auto e = first; e != last && e + 1 != last; ++e) prev[(e + 1)->id] = e->id;
  }
  return prev;
}

std::string contributor_name(const StepGraph& g, const PathSegment& s) {
  if (s.task < 0) return "waiting";
  const Task& task = g.tasks[static_cast<std::size_t>(s.task)];
  switch (task.kind) {
    case TaskKind::Compute: return g.works[task.index].name;
    case TaskKind::Transfer: return "pp_send_recv";
    case TaskKind::Collective:
      return fmt::format("{} {}", path_category_name(s.category), trnsim::to_string(g.collectives[task.index].op));
  }
  return "?";
}

// Stable sort of a name-ordered list: equal seconds stay in name order.
void rank_contributors(std::size_t top_n, std::vector<PathContributor>& top) {
  std::stable_sort(top.begin(), top.end(),
                   [](const PathContributor& a, const PathContributor& b) { return a.seconds > b.seconds; });
  if (top.size() > top_n) top.resize(top_n);
}

void summarise(const StepGraph& g, std::size_t top_n, CriticalPath& path) {
  std::map<std::int32_t, RankPathTime> ranks;
  std::map<std::string, PathContributor> kinds;
  for (const PathSegment& s : path.segments) {
    const double seconds = (s.end - s.begin).to_seconds();
    path.seconds[static_cast<std::size_t>(s.category)] += seconds;
    path.length_s += seconds;
    RankPathTime& r = ranks[s.rank];
    r.rank = s.rank;
    r.stage = s.stage;
    r.seconds += seconds;
    const std::string name = contributor_name(g, s);
    PathContributor& k = kinds[name];
    k.name = name;
    k.category = s.category;
    k.seconds += seconds;
    ++k.count;
  }
  for (const auto& [rank, r] : ranks) path.by_rank.push_back(r);
  for (auto& [name, k] : kinds) path.top.push_back(std::move(k));
  rank_contributors(top_n, path.top);
}

}  // namespace

std::string_view path_category_name(PathCategory c) {
  switch (c) {
    case PathCategory::Forward: return "forward";
    case PathCategory::Backward: return "backward";
    case PathCategory::Recompute: return "recompute";
    case PathCategory::Optimizer: return "optimizer";
    case PathCategory::TpComm: return "tp_comm";
    case PathCategory::PpSendRecv: return "pp_send_recv";
    case PathCategory::DpComm: return "dp_comm";
    case PathCategory::Waiting: return "waiting";
  }
  return "?";
}

CriticalPath critical_path(const StepGraph& g, const replay::Timeline& tl, std::size_t top_n) {
  CriticalPath path;
  if (g.tasks.empty()) {
    if (tl.step_time > sim::Time::zero()) {
      path.segments.push_back({sim::Time::zero(), tl.step_time, PathCategory::Waiting, -1, 0, 0});
    }
    summarise(g, top_n, path);
    return path;
  }
  const Predecessors preds = predecessors(g);
  const std::vector<std::uint32_t> prev = stream_previous(g, tl);
  const workload::CallMembers members = workload::call_members(g);
  std::vector<bool> visited(g.tasks.size(), false);

  TaskId cur = 0;
  for (TaskId t = 1; t < g.tasks.size(); ++t) {
    if (tl.spans[t].end > tl.spans[cur].end) cur = t;
  }
  std::vector<PathSegment> reversed;
  auto gap = [&](sim::Time begin, sim::Time end, TaskId delayed) {
    if (end > begin) {
      reversed.push_back({begin, end, PathCategory::Waiting, -1, g.tasks[delayed].rank, g.tasks[delayed].stage});
    }
  };
  sim::Time cursor = tl.step_time;
  gap(tl.spans[cur].end, cursor, cur);  // none: the last task ends at the step time
  cursor = std::min(cursor, tl.spans[cur].end);
  for (;;) {
    visited[cur] = true;
    const Task& task = g.tasks[cur];
    const replay::Span& span = tl.spans[cur];
    const sim::Time run_begin = task.kind == TaskKind::Collective ? span.active : span.start;
    if (cursor > run_begin) {
      reversed.push_back({run_begin, cursor, category_of(task), static_cast<std::int64_t>(cur), task.rank, task.stage});
    }
    cursor = std::min(cursor, run_begin);
    // The task whose start the predecessors decide: for a collective, its last member to arrive.
    TaskId node = cur;
    if (task.kind == TaskKind::Collective) {
      for (const TaskId m : members.of(task.call)) {  // ascending id: the lowest wins ties, after cur itself
        if (m != cur && !visited[m] && tl.spans[m].start > tl.spans[node].start) node = m;
      }
      visited[node] = true;
    }
    std::uint32_t best = kNone;
    auto consider = [&](std::uint32_t p) {
      if (p == kNone || visited[p] || tl.spans[p].end > cursor) return;
      if (best == kNone || tl.spans[p].end > tl.spans[best].end) best = p;
    };
    for (std::uint32_t i = preds.begin[node]; i < preds.begin[node + 1]; ++i) consider(preds.ids[i]);
    consider(prev[node]);
    if (best == kNone) {
      gap(sim::Time::zero(), cursor, node);
      break;
    }
    gap(tl.spans[best].end, cursor, node);
    cursor = tl.spans[best].end;
    cur = best;
  }
  path.segments.assign(reversed.rbegin(), reversed.rend());
  path.segment_count = static_cast<std::int64_t>(path.segments.size());
  summarise(g, top_n, path);
  return path;
}

CriticalPath extrapolate_path(const CriticalPath& a, const CriticalPath& b, std::int64_t k, double length_s,
                              std::size_t top_n) {
  const auto moved = [k](double x, double y) { return x + static_cast<double>(k) * (y - x); };
  CriticalPath out;
  out.segment_count = a.segment_count + k * (b.segment_count - a.segment_count);
  for (std::size_t c = 0; c < out.seconds.size(); ++c) out.seconds[c] = moved(a.seconds[c], b.seconds[c]);
  out.length_s = length_s;
  // A rank or contributor missing from one path counts zero there.
  std::map<std::int32_t, std::pair<RankPathTime, RankPathTime>> ranks;
  for (const RankPathTime& r : a.by_rank) ranks[r.rank].first = r;
  for (const RankPathTime& r : b.by_rank) ranks[r.rank].second = r;
  for (const auto& [rank, pair] : ranks) {
    RankPathTime r{rank, pair.second.seconds > 0 ? pair.second.stage : pair.first.stage,
                   moved(pair.first.seconds, pair.second.seconds)};
    if (r.seconds > 0) out.by_rank.push_back(r);
  }
  std::map<std::string, std::pair<PathContributor, PathContributor>> kinds;
  for (const PathContributor& c : a.top) kinds[c.name].first = c;
  for (const PathContributor& c : b.top) kinds[c.name].second = c;
  for (const auto& [name, pair] : kinds) {
    PathContributor c;
    c.name = name;
    c.category = pair.second.count > 0 ? pair.second.category : pair.first.category;
    c.seconds = moved(pair.first.seconds, pair.second.seconds);
    c.count = pair.first.count + k * (pair.second.count - pair.first.count);
    if (c.count > 0) out.top.push_back(std::move(c));
  }
  rank_contributors(top_n, out.top);
  return out;
}

}  // namespace trnsim::report
