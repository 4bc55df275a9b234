#pragma once
// StepGraph: one optimizer step as tasks per rank with dependencies. Built from a model config
// (workload::build_step) or read from a trace; the replay executor runs it. Time-free: tasks carry
// work (FLOPs, bytes, matmul shapes), never durations — except trace tasks with a measured time.
//
// Scale: identical ranks may be simulated once. A StepGraph lists the *simulated* ranks; every
// collective names the full groups of real ranks it involves (the network carries all their
// traffic), so the links still see every flow that crosses them. Those lists are stored once per
// distinct list (group_sets, replica_sets), not per collective or transfer: the graph's size does
// not grow with the data-parallel degree beyond them.
//
// Conventions (workload::build_step; the replay executor relies on them):
// - Order on a rank: every task of a simulated rank except Transfer and DpComm collectives is
//   chained to the rank's previous such task by an explicit dependency edge, in pipeline-schedule
//   order. The executor needs only dependency counting and one-task-at-a-time streams; it never
//   orders tasks by id.
// - A collective call may involve several simulated ranks (full builds; the tied-embedding sync
//   between the first and last stage): all tasks with the same `call` form one call. The call
//   starts when all of them are ready and they all finish together. Collective entries are shared
//   descriptions (op, bytes, group set): many calls point at one entry through Task::index.
// - Transfer tasks belong to the sender, on its PpComm stream; the receiver's consumer task is
//   among their successors.
// - DP gradient buckets (DpComm) depend on the backward task that completes their last gradient
//   and are chained in launch order; the optimizer task depends on the last bucket.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "trnsim/cost/kernel.hpp"
#include "trnsim/net/collective.hpp"

namespace trnsim::workload {

// A list of kernels run back to back as one compute task (e.g. a layer's attention block).
struct Work {
  std::string name;            // "attn_fwd", "mlp_bwd", ...
  std::vector<cost::Kernel> kernels;
  double measured_s = -1;      // traces: measured duration replaces the cost model when >= 0
};

enum class TaskKind : std::uint8_t { Compute, Collective, Transfer };

// The stream of its rank a task occupies; one task at a time per (rank, stream).
enum class Stream : std::uint8_t { Compute, TpComm, DpComm, PpComm };
inline constexpr int kStreamCount = 4;

// Where a task's time goes in the step breakdown.
enum class Category : std::uint8_t {
  Forward, Backward, Recompute, Optimizer,  // compute
  TpComm, DpComm, PpComm,                    // communication
  // The dispatch and combine all-to-alls of mixture-of-experts layers on the EP group; they run
  // on the rank's TpComm stream (in-layer communication) and count as exposed TP time in the
  // breakdown; the moe_all_to_all finding names them.
  EpComm,
  // Context parallelism's K/V exchanges on the CP group (ring send/recv between neighbours, or
  // the all-gather and reduce-scatter of K/V): on the TpComm stream too, counted as exposed TP
  // time in the breakdown; the cp_exposed finding names them.
  CpComm,
};
constexpr auto enum_table(Category) {  // spellings of trace files (trace/trace.hpp)
  using enum Category;
  return std::array{EnumName{Forward, "forward"},     EnumName{Backward, "backward"},
                    EnumName{Recompute, "recompute"}, EnumName{Optimizer, "optimizer"},
                    EnumName{TpComm, "tp_comm"},      EnumName{DpComm, "dp_comm"},
                    EnumName{PpComm, "pp_comm"},      EnumName{EpComm, "ep_comm"},
                    EnumName{CpComm, "cp_comm"}};
}

// The network layer's operations (all-reduce, reduce-scatter, all-gather, all-to-all, broadcast).
using CollectiveOp = net::CollectiveOp;

// Groups of real ranks that run one call at the same moment (by symmetry), `group_size` ranks
// each, back to back in `ranks`, each group in ring order. Group 0 holds the simulated members;
// the others are identical replicas whose traffic also loads the network.
struct GroupSet {
  std::int32_t group_size = 0;
  std::vector<std::int32_t> ranks;

  std::size_t count() const { return group_size > 0 ? ranks.size() / static_cast<std::size_t>(group_size) : 0; }
  std::span<const std::int32_t> group(std::size_t g) const {
    const auto n = static_cast<std::size_t>(group_size);
    return {ranks.data() + g * n, n};
  }
};

// One collective call. `bytes` is the per-rank buffer size as nccl-tests defines it (all-reduce:
// the reduced tensor; all-gather: the gathered output; reduce-scatter: the input).
struct Collective {
  CollectiveOp op = CollectiveOp::AllReduce;
  double bytes = 0;
  std::uint32_t group_set = 0;  // its groups: StepGraph::group_sets[group_set]
};

// A point-to-point transfer between real ranks (src, dst).
using RankPair = std::pair<std::int32_t, std::int32_t>;

using TaskId = std::uint32_t;

struct Task {
  TaskKind kind = TaskKind::Compute;
  Stream stream = Stream::Compute;
  Category category = Category::Forward;
  std::int32_t rank = 0;          // simulated rank that runs it
  std::int32_t layer = -1;        // global layer index, -1 when not per layer
  std::int32_t micro_batch = -1;  // -1 when not per micro-batch
  std::int32_t stage = 0;         // pipeline stage of `rank`
  // Compute: into StepGraph::works; Collective: into collectives; Transfer: into replica_sets
  // (an index past its end: no replicas).
  std::uint32_t index = 0;
  std::uint32_t call = 0;         // Collective: call id in [0, StepGraph::calls), shared by members
  // Transfer (pipeline send/recv): from `rank` to `peer`, `bytes`. Its successors on the peer
  // model the receive; StepGraph::replica_sets[index] lists identical replicas.
  std::int32_t peer = -1;
  double bytes = 0;
  std::uint32_t deps = 0;         // number of predecessors
  std::uint32_t succ_begin = 0;   // successors: StepGraph::successors[succ_begin, succ_end)
  std::uint32_t succ_end = 0;
};

struct StepGraph {
  std::vector<Task> tasks;
  std::vector<TaskId> successors;           // CSR adjacency, see Task::succ_begin
  std::vector<Work> works;                  // shared: identical layers point at one Work
  std::vector<Collective> collectives;
  std::vector<GroupSet> group_sets;         // shared: every collective between the same groups
  std::vector<std::int32_t> simulated_ranks;  // ranks that carry tasks, ascending
  std::int32_t total_ranks = 0;             // real ranks in the job
  // Replica transfers by symmetry: a Transfer task's replica_sets[index] lists the (src, dst)
  // pairs that move the same bytes at the same time as it, the task's own pair excluded; one list
  // per pair of stages, shared by all their transfers. Empty when not symmetric.
  std::vector<std::vector<RankPair>> replica_sets;
  std::uint32_t calls = 0;                  // number of distinct collective calls (Task::call)
  std::vector<std::string> findings;        // layout findings (a TP group spanning instances)

  // Per real rank up to the last simulated one: its slot in simulated_ranks (index_ranks); empty
  // when the graph was not indexed or its ranks are too sparse for a table.
  std::vector<std::uint32_t> slot_by_rank;

  // Contract: the index of `rank` in simulated_ranks, the slot of per-simulated-rank arrays.
  // Throws InternalError for a rank that is not simulated. O(1) from slot_by_rank when it holds
  // the rank, else O(log simulated ranks); no allocation. A stale table is never trusted: the
  // slot it gives must hold the rank.
  std::size_t rank_slot(std::int32_t rank) const;
  // Contract: fills slot_by_rank from simulated_ranks (strictly ascending) when the table stays
  // small: the largest rank below total_ranks, up to 4 Mi (a table of at most 16 MiB), or below
  // 16 x simulated ranks + 65,536 (a trace may number its ranks sparsely); clears it otherwise.
  // Every builder calls it once simulated_ranks and total_ranks are final, since replay and
  // reports look a slot up per task (a binary search there was 2-4 % of a sweep's plan, and
  // doubled the per-task passes at 65,536 chips). O(largest rank).
  void index_ranks();
  // Contract: c's groups; throws InternalError for a group set out of range. O(1).
  const GroupSet& groups_of(const Collective& c) const;
  // The replicas of a Transfer task's index (empty past replica_sets' end). O(1).
  std::span<const RankPair> replicas(std::uint32_t replica_set) const {
    return replica_set < replica_sets.size() ? std::span<const RankPair>(replica_sets[replica_set]) : std::span<const RankPair>();
  }
  bool simulates(std::int32_t rank) const {
    return std::binary_search(simulated_ranks.begin(), simulated_ranks.end(), rank);
  }
};

[[noreturn]] void throw_unsimulated_rank(std::int32_t rank);
[[noreturn]] void throw_bad_group_set(std::uint32_t set, std::size_t sets);

inline const GroupSet& StepGraph::groups_of(const Collective& c) const {
  if (c.group_set >= group_sets.size()) throw_bad_group_set(c.group_set, group_sets.size());
  return group_sets[c.group_set];
}

inline std::size_t StepGraph::rank_slot(std::int32_t rank) const {
  // A negative rank wraps past any table.
  if (const auto r = static_cast<std::size_t>(static_cast<std::uint32_t>(rank)); r < slot_by_rank.size()) {
    const std::uint32_t s = slot_by_rank[r];
    if (s < simulated_ranks.size() && simulated_ranks[s] == rank) return s;
  }
  const auto it = std::lower_bound(simulated_ranks.begin(), simulated_ranks.end(), rank);
  if (it == simulated_ranks.end() || *it != rank) throw_unsimulated_rank(rank);
  return static_cast<std::size_t>(it - simulated_ranks.begin());
}

// The member tasks of each collective call (all tasks with that Task::call), as CSR.
struct CallMembers {
  std::vector<std::uint32_t> begin;  // StepGraph::calls + 1 offsets into `tasks`
  std::vector<TaskId> tasks;         // ascending id within a call
  std::span<const TaskId> of(std::uint32_t call) const {
    return {tasks.data() + begin[call], tasks.data() + begin[call + 1]};
  }
};

// Contract: the members of every call. Throws InternalError for a collective task whose call is
// not below StepGraph::calls. O(tasks).
CallMembers call_members(const StepGraph& graph);

}  // namespace trnsim::workload
