// build_trace: a TraceDocument checked and turned into a StepGraph (contract in trace.hpp).
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/workload/step_graph_order.hpp"
#include "trnsim/trace/trace.hpp"
#include "../workload/graph_edges.hpp"  // the CSR builder build_step uses

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes
namespace {

constexpr TaskId kNoTask = std::numeric_limits<TaskId>::max();

// The position of each node of one rank by its id, without an allocation per node: a table by id
// when the ids are dense (exported and generated traces number a rank's nodes from 0), else the
// (id, position) pairs sorted.
class NodeIndex {
 public:
  // Returns the position of the first node (in the rank's order) whose id an earlier node has,
  // or kNoIndex.
  std::uint32_t build(const std::vector<TraceNode>& nodes) {
    std::uint64_t max_id = 0;
    for (const TraceNode& n : nodes) max_id = std::max(max_id, n.id);
    if (max_id < 2 * static_cast<std::uint64_t>(nodes.size()) + 64) {
      dense_.assign(static_cast<std::size_t>(max_id) + 1, kNoIndex);
      for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        std::uint32_t& slot = dense_[static_cast<std::size_t>(nodes[i].id)];
        if (slot != kNoIndex) return i;
        slot = i;
      }
      return kNoIndex;
    }
    sparse_ = true;
    sorted_.reserve(nodes.size());
    for (std::uint32_t i = 0; i < nodes.size(); ++i) sorted_.emplace_back(nodes[i].id, i);
    std::sort(sorted_.begin(), sorted_.end());
    // Within a run of one id the second pair is its first repeat; the earliest of those is the
    // node a scan in the rank's order finds first.
    std::uint32_t first = kNoIndex;
    for (std::size_t k = 1; k < sorted_.size(); ++k)
      if (sorted_[k].first == sorted_[k - 1].first && (k < 2 || sorted_[k - 2].first != sorted_[k].first))
        first = std::min(first, sorted_[k].second);
    return first;
  }
  // The position of the node `id`, kNoIndex when the rank has none. O(1) dense, O(log n) else.
  std::uint32_t find(std::uint64_t id) const {
    if (!sparse_) return id < dense_.size() ? dense_[static_cast<std::size_t>(id)] : kNoIndex;
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair{id, std::uint32_t{0}});
    return it != sorted_.end() && it->first == id ? it->second : kNoIndex;
  }

 private:
  bool sparse_ = false;
  std::vector<std::uint32_t> dense_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> sorted_;
};

struct Builder {
  TraceDocument& doc;
  Trace out;

  [[noreturn]] void fail(const std::string& what) const { throw InputError(fmt::format("{}: {}", doc.file, what)); }
  std::string where(const TraceRank& r, const TraceNode& n) const {
    return n.name.empty() ? fmt::format("rank {} node {}", r.rank, n.id)
                          : fmt::format("rank {} node {} ({})", r.rank, n.id, n.name);
  }

  void check_groups() {
    for (std::size_t g = 0; g < doc.groups.size(); ++g) {
      const GroupSet& set = doc.groups[g];
      if (set.group_size < 1 || set.ranks.empty() || set.ranks.size() % static_cast<std::size_t>(set.group_size) != 0)
        fail(fmt::format("group {}: expected {}ranks in whole groups of size {}, found {} ranks", g,
                         set.group_size < 1 ? "at least one group of at least 1 rank; " : "", set.group_size,
                         set.ranks.size()));
      for (std::size_t i = 0; i < set.count(); ++i) {
        std::vector<std::int32_t> sorted(set.group(i).begin(), set.group(i).end());
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t k = 0; k < sorted.size(); ++k) {
          if (sorted[k] < 0 || sorted[k] >= doc.total_ranks)
            fail(fmt::format("group {}: rank {} does not exist (expected ranks 0 to {})", g, sorted[k], doc.total_ranks - 1));
          if (k > 0 && sorted[k] == sorted[k - 1]) fail(fmt::format("group {}: rank {} listed twice in one group", g, sorted[k]));
        }
      }
    }
    for (std::size_t p = 0; p < doc.pairs.size(); ++p)
      for (const auto& [src, dst] : doc.pairs[p])
        if (src < 0 || src >= doc.total_ranks || dst < 0 || dst >= doc.total_ranks || src == dst)
          fail(fmt::format("pairs {}: ({}, {}) is not a pair of two ranks in 0 to {}", p, src, dst, doc.total_ranks - 1));
  }

  Trace build() {
    if (doc.total_ranks < 1) fail(fmt::format("ranks: expected at least 1 rank, found {}", doc.total_ranks));
    check_groups();
    std::sort(doc.ranks.begin(), doc.ranks.end(), [](const TraceRank& a, const TraceRank& b) { return a.rank < b.rank; });
    for (std::size_t i = 0; i < doc.ranks.size(); ++i) {
      const auto r = doc.ranks[i].rank;
      if (r < 0 || r >= doc.total_ranks) fail(fmt::format("rank {} does not exist (expected 0 to {})", r, doc.total_ranks - 1));
      if (i > 0 && doc.ranks[i - 1].rank == r) fail(fmt::format("rank {} listed twice", r));
    }
    StepGraph& g = out.graph;
    g.total_ranks = doc.total_ranks;
    g.group_sets = std::move(doc.groups);
    g.replica_sets = std::move(doc.pairs);
    g.works = std::move(doc.works);
    for (const TraceRank& r : doc.ranks) g.simulated_ranks.push_back(r.rank);
    g.index_ranks();

    // Node index per rank: (id -> position), checked for duplicates.
    std::vector<NodeIndex> index(doc.ranks.size());
    std::size_t total = 0;
    for (std::size_t s = 0; s < doc.ranks.size(); ++s) {
      const TraceRank& r = doc.ranks[s];
      if (const std::uint32_t twice = index[s].build(r.nodes); twice != kNoIndex)
        fail(fmt::format("{}: id used twice on the rank", where(r, r.nodes[twice])));
      total += r.nodes.size();
    }

    // Tasks in ascending (id, rank) order; recv nodes are no task. Sorted on (id, rank slot,
    // position) held in the key itself: the order a stable sort by id gives, without chasing
    // each node for its id.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> order;  // (rank slot, node position)
    {
      std::vector<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>> keys;
      keys.reserve(total);
      for (std::uint32_t s = 0; s < doc.ranks.size(); ++s)
        for (std::uint32_t i = 0; i < doc.ranks[s].nodes.size(); ++i)
          if (doc.ranks[s].nodes[i].kind != NodeKind::Recv) keys.emplace_back(doc.ranks[s].nodes[i].id, s, i);
      std::sort(keys.begin(), keys.end());
      order.reserve(keys.size());
      for (const auto& [id, s, i] : keys) order.emplace_back(s, i);
    }
    std::vector<std::vector<TaskId>> task_of(doc.ranks.size());
    for (std::size_t s = 0; s < doc.ranks.size(); ++s) task_of[s].assign(doc.ranks[s].nodes.size(), kNoTask);
    g.tasks.reserve(order.size());
    out.task_nodes.reserve(order.size());

    std::map<std::tuple<double, std::uint32_t, int>, std::uint32_t> collective_index;
    std::map<std::pair<std::uint32_t, std::int32_t>, std::uint32_t> occurrence;  // (group, rank) -> calls so far
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> call_of;    // (group, k) -> call id
    std::vector<TaskId> call_first;  // per call: its first member task (to compare the others with)
    std::vector<std::uint32_t> call_count;
    for (const auto& [s, i] : order) {
      const TraceRank& r = doc.ranks[s];
      const TraceNode& n = r.nodes[i];
      Task t;
      t.rank = r.rank;
      t.stage = r.stage;
      t.layer = n.layer;
      t.micro_batch = n.micro_batch;
      t.category = n.category;
      switch (n.kind) {
        case NodeKind::Compute:
          if (n.work >= g.works.size()) fail(fmt::format("{}: work {} does not exist ({} works)", where(r, n), n.work, g.works.size()));
          t.kind = TaskKind::Compute;
          t.stream = Stream::Compute;
          t.index = n.work;
          if (g.works[n.work].measured_s >= 0) ++out.measured_tasks;
          break;
        case NodeKind::Collective: {
          if (n.group >= g.group_sets.size())
            fail(fmt::format("{}: group {} does not exist ({} groups)", where(r, n), n.group, g.group_sets.size()));
          const GroupSet& set = g.group_sets[n.group];
          const auto first = set.group(0);
          if (std::find(first.begin(), first.end(), r.rank) == first.end())
            fail(fmt::format("{}: rank {} is not a member of the first group of group {} ({})", where(r, n), r.rank, n.group,
                             fmt::join(first, ",")));
          t.kind = TaskKind::Collective;
          t.stream = n.category == Category::DpComm ? Stream::DpComm : Stream::TpComm;
          const auto key = std::make_tuple(n.bytes, n.group, static_cast<int>(n.op));
          const auto [it, fresh] = collective_index.try_emplace(key, static_cast<std::uint32_t>(g.collectives.size()));
          if (fresh) g.collectives.push_back(Collective{n.op, n.bytes, n.group});
          t.index = it->second;
          const std::uint32_t k = occurrence[{n.group, r.rank}]++;
          const auto [c, new_call] = call_of.try_emplace({n.group, k}, static_cast<std::uint32_t>(call_first.size()));
          t.call = c->second;
          if (new_call) {
            call_first.push_back(static_cast<TaskId>(g.tasks.size()));
            call_count.push_back(0);
          } else {
            const Task& f = g.tasks[call_first[t.call]];
            const Collective& fc = g.collectives[f.index];
            if (fc.op != n.op || fc.bytes != n.bytes) {
              const auto& fn = out.task_nodes[call_first[t.call]];
              fail(fmt::format("{}: collective call {} on group {} is {} of {} bytes here but {} of {} bytes on rank {} node {}",
                               where(r, n), k, n.group, to_string(n.op), n.bytes, to_string(fc.op), fc.bytes, fn.rank, fn.id));
            }
          }
          ++call_count[t.call];
          break;
        }
        case NodeKind::Send:
          if (n.peer < 0 || n.peer >= doc.total_ranks || n.peer == r.rank)
            fail(fmt::format("{}: peer {} is not another rank in 0 to {}", where(r, n), n.peer, doc.total_ranks - 1));
          if (n.pairs != kNoIndex && n.pairs >= g.replica_sets.size())
            fail(fmt::format("{}: pairs {} does not exist ({} pair lists)", where(r, n), n.pairs, g.replica_sets.size()));
          t.kind = TaskKind::Transfer;
          t.stream = Stream::PpComm;
          t.category = Category::PpComm;
          t.peer = n.peer;
          t.bytes = n.bytes;
          t.index = n.pairs == kNoIndex ? static_cast<std::uint32_t>(g.replica_sets.size()) : n.pairs;
          break;
        case NodeKind::Recv: break;
      }
      task_of[s][i] = static_cast<TaskId>(g.tasks.size());
      g.tasks.push_back(t);
      out.task_nodes.push_back({r.rank, n.id});
    }
    g.calls = static_cast<std::uint32_t>(call_first.size());
    check_call_members(call_first, call_count);

    // Send/recv matching on (src, dst, tag).
    std::map<std::tuple<std::int32_t, std::int32_t, std::int64_t>, std::pair<std::uint32_t, std::uint32_t>> sends;
    for (std::uint32_t s = 0; s < doc.ranks.size(); ++s)
      for (std::uint32_t i = 0; i < doc.ranks[s].nodes.size(); ++i) {
        const TraceNode& n = doc.ranks[s].nodes[i];
        if (n.kind != NodeKind::Send) continue;
        if (!sends.try_emplace({doc.ranks[s].rank, n.peer, n.tag}, s, i).second)
          fail(fmt::format("{}: a second send to rank {} with tag {}", where(doc.ranks[s], n), n.peer, n.tag));
      }
    std::vector<std::vector<TaskId>> recv_transfer(doc.ranks.size());
    for (std::uint32_t s = 0; s < doc.ranks.size(); ++s) {
      recv_transfer[s].assign(doc.ranks[s].nodes.size(), kNoTask);
      for (std::uint32_t i = 0; i < doc.ranks[s].nodes.size(); ++i) {
        const TraceNode& n = doc.ranks[s].nodes[i];
        if (n.kind != NodeKind::Recv) continue;
        const auto it = sends.find({n.peer, doc.ranks[s].rank, n.tag});
        if (it == sends.end())
          fail(fmt::format("{}: receive from rank {} with tag {} has no matching send", where(doc.ranks[s], n), n.peer, n.tag));
        const auto [ss, si] = it->second;
        recv_transfer[s][i] = task_of[ss][si];
        sends.erase(it);
      }
    }
    if (!sends.empty()) {
      const auto [s, i] = sends.begin()->second;
      const TraceNode& n = doc.ranks[s].nodes[i];
      fail(fmt::format("{}: send to rank {} with tag {} has no matching receive on rank {}", where(doc.ranks[s], n), n.peer, n.tag,
                       n.peer));
    }

    // Edges. A dependency on a recv stands for the recv's transfer and the recv's own
    // dependencies (resolved once per recv; a recv that waits for itself is a cycle).
    std::vector<std::vector<std::vector<TaskId>>> recv_sources(doc.ranks.size());
    std::vector<std::vector<std::uint8_t>> state(doc.ranks.size());
    for (std::size_t s = 0; s < doc.ranks.size(); ++s) {
      recv_sources[s].resize(doc.ranks[s].nodes.size());
      state[s].assign(doc.ranks[s].nodes.size(), 0);
    }
    EdgeList edges;
    edges.reserve(total);
    auto dep_position = [&](std::uint32_t s, const TraceNode& n, std::uint64_t d) {
      const std::uint32_t p = index[s].find(d);
      if (p == kNoIndex)
        fail(fmt::format("{}: depends on node {}, which rank {} does not have", where(doc.ranks[s], n), d, doc.ranks[s].rank));
      if (d == n.id) fail(fmt::format("{}: depends on itself", where(doc.ranks[s], n)));
      return p;
    };
    auto sources = [&](auto& self, std::uint32_t s, std::uint32_t i) -> const std::vector<TaskId>& {
      auto& src = recv_sources[s][i];
      if (state[s][i] == 2) return src;
      const TraceNode& n = doc.ranks[s].nodes[i];
      if (state[s][i] == 1) fail(fmt::format("dependency cycle through receives: {}", where(doc.ranks[s], n)));
      state[s][i] = 1;
      src.push_back(recv_transfer[s][i]);
      for (std::uint64_t d : n.deps) {
        const std::uint32_t p = dep_position(s, n, d);
        if (doc.ranks[s].nodes[p].kind == NodeKind::Recv) {
          const auto& more = self(self, s, p);
          src.insert(src.end(), more.begin(), more.end());
        } else {
          src.push_back(task_of[s][p]);
        }
      }
      state[s][i] = 2;
      return src;
    };
    for (TaskId t = 0; t < g.tasks.size(); ++t) {
      const auto& [s, i] = order[t];
      const TraceNode& n = doc.ranks[s].nodes[i];
      for (std::uint64_t d : n.deps) {
        const std::uint32_t p = dep_position(s, n, d);
        if (doc.ranks[s].nodes[p].kind == NodeKind::Recv) {
          for (TaskId from : sources(sources, s, p)) edges.add(from, t);
        } else {
          edges.add(task_of[s][p], t);
        }
      }
    }
    // Receives nobody waits for still need their dependencies to exist.
    for (std::uint32_t s = 0; s < doc.ranks.size(); ++s)
      for (std::uint32_t i = 0; i < doc.ranks[s].nodes.size(); ++i)
        if (doc.ranks[s].nodes[i].kind == NodeKind::Recv) sources(sources, s, i);
    edges.to_csr(g);
    check_cycles();

    out.file = doc.file;
    out.format = doc.format;
    out.version = doc.version;
    out.cluster_instance = doc.cluster_instance;
    out.cluster_count = doc.cluster_count;
    out.dtype = doc.dtype;
    out.source = std::move(doc.source);
    out.ignored = std::move(doc.ignored);
    return std::move(out);
  }

  // Every simulated member of a call's first group takes part in it, once.
  void check_call_members(const std::vector<TaskId>& call_first, const std::vector<std::uint32_t>& call_count) {
    const StepGraph& g = out.graph;
    for (std::size_t c = 0; c < call_first.size(); ++c) {
      const Task& f = g.tasks[call_first[c]];
      const GroupSet& set = g.group_sets[g.collectives[f.index].group_set];
      std::uint32_t members = 0;
      for (std::int32_t rank : set.group(0)) members += g.simulates(rank) ? 1U : 0U;
      // A CP ring step (send-recv on pairs): only the sender of the first pair calls it; its
      // receiver makes its own call as the sender of the next pair.
      if (g.collectives[f.index].op == CollectiveOp::SendRecv) members = g.simulates(set.group(0)[0]) ? 1U : 0U;
      if (call_count[c] == members) continue;
      // Rare (an error): find a member without a task in this call.
      std::int32_t missing = -1;
      for (std::int32_t rank : set.group(0)) {
        if (!g.simulates(rank) || missing >= 0) continue;
        bool found = false;
        for (TaskId t = call_first[c]; t < g.tasks.size() && !found; ++t)
          found = g.tasks[t].kind == TaskKind::Collective && g.tasks[t].call == c && g.tasks[t].rank == rank;
        if (!found) missing = rank;
      }
      {
        const auto& fn = out.task_nodes[call_first[c]];
        fail(fmt::format("rank {} node {}: collective on group {} has {} of its {} members in this trace; rank {} has fewer "
                         "collectives on that group (members must make the same calls in the same order)",
                         fn.rank, fn.id, g.collectives[f.index].group_set, call_count[c], members, missing));
      }
    }
  }

  void check_cycles() {
    try {
      check_acyclic(out.graph);
    } catch (const CycleError& e) {
      std::string path;
      for (TaskId t : e.tasks()) {
        const auto& ref = out.task_nodes[t];
        path += fmt::format("{}rank {} node {}", path.empty() ? "" : " -> ", ref.rank, ref.id);
      }
      fail("dependency cycle: " + path);
    }
  }
};

}  // namespace

Trace build_trace(TraceDocument doc) {
  Builder b{doc, {}};
  return b.build();
}

}  // namespace trnsim::trace
