#include "trnsim/replay/executor.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/sim/countdown.hpp"
#include "trnsim/workload/step_graph_order.hpp"

namespace trnsim::replay {
namespace {

using workload::Collective;
using workload::StepGraph;
using workload::Task;
using workload::TaskId;
using workload::TaskKind;

constexpr std::size_t kStreams = static_cast<std::size_t>(workload::kStreamCount);
constexpr TaskId kNoTask = 0xffffffffu;
// Pricing key of a rank with nothing on the network (a real key is the HBM demand, >= 0).
constexpr double kOffNetwork = -1;

// A stream's ready tasks, first-in first-out. Storage is reserved up front for every task that
// will ever use the stream, so pushing never reallocates while the engine runs.
// A compute task running on the stream keeps its completion event and the rate it runs at, so
// that a change in its rank's network activity can move its end (Run::reprice).
struct StreamQueue {
  std::vector<TaskId> ready;
  std::size_t head = 0;
  bool busy = false;
  TaskId computing = kNoTask;      // the compute task running here, if any
  sim::EventId done;               // its completion event
  sim::Time end;                   // when that event runs
  sim::Time started;               // when it started
  double seconds = 0;              // its whole duration at the current rate
  double priced_at = kOffNetwork;  // the rank's pricing key when `seconds` was set
  bool empty() const { return head == ready.size(); }
};

class Run {
 public:
  Run(sim::Engine& engine, const StepGraph& graph, std::span<const double> work_seconds,
      Communicator& comm, const ExecutorOptions& options)
      : engine_(engine), graph_(graph), work_seconds_(work_seconds), comm_(comm), options_(options) {
    comm_.bind(graph_);
    // Whether the network can set calls aside at all, asked before any call: a cut with no
    // call of its own must not pass for one whose calls were set aside.
    if (aside_) aside_ok_ = comm_.set_aside(false);
    index_ranks();
    index_collectives();
    timeline_.spans.resize(graph_.tasks.size());
    deps_left_.resize(graph_.tasks.size());
    for (std::size_t t = 0; t < graph_.tasks.size(); ++t) deps_left_[t].arm(graph_.tasks[t].deps);
  }

  Timeline run() {
    const std::uint64_t events_before = engine_.events_processed();
    for (TaskId t = 0; t < graph_.tasks.size(); ++t) {
      if (deps_left_[t].done()) make_ready(t);
    }
    engine_.run();
    const std::uint64_t events = engine_.events_processed() - events_before;
    if (finished_ != graph_.tasks.size()) {
      // A dependency cycle leaves its tasks waiting too: name it (CycleError) before blaming a
      // stream. Checked here, not before the replay: an acyclic graph, every graph build_step
      // makes, then pays nothing for the depth-first search (about 5 % of a sweep's plan).
      workload::check_acyclic(graph_);
      report_stuck();
    }
    timeline_.events = events;
    // Every event counted: each ran one completion below (a network that joins several events
    // into one completion, as replicas not collapsed, leaves the set-aside count unknown).
    timeline_.set_aside = aside_ && aside_ok_ && completions_ == events;
    timeline_.events_aside = timeline_.set_aside ? events_aside_ : 0;
    return std::move(timeline_);
  }

  // Called from engine events (handlers capture `this` and an index).
  void compute_done(TaskId t) {
    if (aside_) [[unlikely]] count_completion(aside(graph_.tasks[t]));
    queues_[queue_index(graph_.tasks[t])].computing = kNoTask;
    finish(t);
  }
  void transfer_done(TaskId t) {
    if (aside_) [[unlikely]] count_completion(aside(graph_.tasks[t]));
    const std::size_t slot = graph_.rank_slot(graph_.tasks[t].rank);
    if (--on_network_[slot] == 0) hbm_demand_[slot] = 0;
    reprice(slot);
    finish(t);
  }
  void collective_done(std::uint32_t c) {
    if (aside_) [[unlikely]] count_completion(aside(graph_.tasks[members_.of(c).front()]));
    for (const TaskId m : members_.of(c)) {
      const std::size_t slot = graph_.rank_slot(graph_.tasks[m].rank);
      hbm_demand_[slot] = --on_network_[slot] == 0 ? 0.0 : hbm_demand_[slot] - call_demand_[c];
      reprice(slot);
    }
    for (const TaskId m : members_.of(c)) finish(m);
  }

 private:
  void index_ranks() {
    const auto& ranks = graph_.simulated_ranks;
    if (!std::is_sorted(ranks.begin(), ranks.end())) {
      throw InternalError("replay: StepGraph::simulated_ranks must be ascending");
    }
    std::vector<std::size_t> per_stream(ranks.size() * kStreams, 0);
    for (const Task& task : graph_.tasks) ++per_stream[queue_index(task)];
    queues_.resize(per_stream.size());
    for (std::size_t q = 0; q < queues_.size(); ++q) queues_[q].ready.reserve(per_stream[q]);
    on_network_.assign(ranks.size(), 0);
    hbm_demand_.assign(ranks.size(), 0.0);
  }

  // hbm_demand of graph_.collectives[i], computed at its first call: the expected time is a closed
  // form of the collective alone (Communicator::expected_seconds), the same at every call, and
  // looking it up per call was 5 % of a llama3.1-405b-trn2u plan (its hash over the group's ranks).
  double collective_demand(std::uint32_t i) {
    double& d = collective_demand_[i];
    if (d < 0) d = hbm_demand(graph_.collectives[i]);
    return d;
  }

  // Bytes/s one member of `c` moves through HBM (HbmSharing); 0 when not modelled or unknown.
  double hbm_demand(const Collective& c) {
    if (!(options_.hbm_sharing.rank_hbm_bytes_per_s > 0) || c.group_set >= graph_.group_sets.size()) return 0;
    const int group_size = graph_.group_sets[c.group_set].group_size;
    if (group_size == 0) return 0;
    const double seconds = comm_.expected_seconds(c);
    if (!(seconds > 0)) return 0;
    return collective_hbm_bytes(c.op, group_size, c.bytes) / seconds;
  }

  void index_collectives() {
    for (const Task& task : graph_.tasks) {
      if (task.kind == TaskKind::Collective && task.index >= graph_.collectives.size()) {
        throw InternalError(fmt::format("replay: collective {} of {}", task.index, graph_.collectives.size()));
      }
    }
    collective_demand_.assign(graph_.collectives.size(), -1.0);  // not computed yet
    members_ = workload::call_members(graph_);
    call_demand_.assign(graph_.calls, 0.0);
    awaiting_.resize(graph_.calls);
    for (std::uint32_t c = 0; c < graph_.calls; ++c) awaiting_[c].arm(members_.of(c).size());
  }

  // Whether `task` is in the micro-batches set aside (ExecutorOptions::aside_lo, aside_hi).
  bool aside(const Task& task) const {
    return aside_ && task.micro_batch >= options_.aside_lo && task.micro_batch < options_.aside_hi;
  }
  // Only where micro-batches are set aside: the count of completions is what checks that every
  // engine event was one.
  void count_completion(bool aside) {
    ++completions_;
    events_aside_ += aside ? 1 : 0;
  }
  // Sets the network's calls aside while it lives, where `on`: a call that throws does not leave
  // a communicator a caller may reuse setting its calls aside.
  class AsideScope {
   public:
    AsideScope(Run& run, bool on) : run_(on ? &run : nullptr) {
      if (run_ != nullptr && !run_->comm_.set_aside(true)) run_->aside_ok_ = false;
    }
    ~AsideScope() {
      if (run_ != nullptr) run_->comm_.set_aside(false);
    }
    AsideScope(const AsideScope&) = delete;
    AsideScope& operator=(const AsideScope&) = delete;

   private:
    Run* run_;
  };

  std::size_t queue_index(const Task& task) const {
    return graph_.rank_slot(task.rank) * kStreams + static_cast<std::size_t>(task.stream);
  }

  void make_ready(TaskId t) {
    StreamQueue& q = queues_[queue_index(graph_.tasks[t])];
    q.ready.push_back(t);
    if (!q.busy) start_next(q);
  }

  void start_next(StreamQueue& q) {
    if (q.empty()) return;
    const TaskId t = q.ready[q.head++];
    q.busy = true;
    const Task& task = graph_.tasks[t];
    const sim::Time now = engine_.now();
    timeline_.spans[t].start = now;
    switch (task.kind) {
      case TaskKind::Compute: {
        const std::size_t slot = graph_.rank_slot(task.rank);
        q.computing = t;
        q.priced_at = pricing_key(slot);
        q.seconds = compute_seconds(task, slot);
        q.started = now;
        q.end = now + sim::Time::seconds(q.seconds);
        q.done = engine_.schedule(q.end, [this, t] { compute_done(t); });
        timeline_.spans[t].active = now;
        break;
      }
      case TaskKind::Transfer: {
        timeline_.spans[t].active = now;
        const std::size_t slot = graph_.rank_slot(task.rank);
        ++on_network_[slot];
        reprice(slot);
        const AsideScope scope(*this, aside(task));
        comm_.start_transfer(task.rank, task.peer, task.bytes, task.index,
                             sim::InlineHandler([this, t] { transfer_done(t); }));
        break;
      }
      case TaskKind::Collective: {
        const std::uint32_t c = task.call;
        if (awaiting_[c].count_down()) start_collective(c, task.index, now);
        break;
      }
    }
  }

  void start_collective(std::uint32_t c, std::uint32_t collective, sim::Time now) {
    const double demand = collective_demand(collective);
    call_demand_[c] = demand;
    for (const TaskId m : members_.of(c)) {
      timeline_.spans[m].active = now;
      const std::size_t slot = graph_.rank_slot(graph_.tasks[m].rank);
      ++on_network_[slot];
      hbm_demand_[slot] += demand;
      reprice(slot);
    }
    bool apart = false;
    if (aside_) [[unlikely]] {
      apart = aside(graph_.tasks[members_.of(c).front()]);
      for (const TaskId m : members_.of(c)) {
        if (aside(graph_.tasks[m]) != apart) aside_ok_ = false;  // a call across the boundary
      }
    }
    const AsideScope scope(*this, apart);
    comm_.start_collective(graph_.collectives[collective], sim::InlineHandler([this, c] { collective_done(c); }));
  }

  // What a compute task's rate on `slot` depends on: nothing on the network, or the collectives'
  // HBM demand while something is.
  double pricing_key(std::size_t slot) const { return on_network_[slot] > 0 ? hbm_demand_[slot] : kOffNetwork; }

  // Duration of compute `task` if the whole of it ran under the rank's present network activity.
  double compute_seconds(const Task& task, std::size_t slot) const {
    double seconds = work_seconds_[task.index];
    if (on_network_[slot] > 0) {
      const double demand = hbm_demand_[slot];
      if (demand > 0 && !(graph_.works[task.index].measured_s >= 0)) {
        const double h = options_.hbm_sharing.rank_hbm_bytes_per_s;
        // The collectives draw at most what HBM delivers, so compute keeps at least half of it.
        seconds = options_.hbm_sharing.task_seconds(task.index, h / (h + std::min(demand, h)));
      }
      seconds *= options_.comm_compute_slowdown;
    }
    return seconds;
  }

  // The rank's network activity changed: each compute task running on it keeps the fraction of
  // its work already done and runs the rest at the new rate, (end - now) x new / old duration;
  // its completion event moves when that changes its end. Called after every change of
  // on_network_ or hbm_demand_, so a task's rate is always the one of the present activity. A task
  // that started at this very instant has done no work: it is priced afresh, now + its duration,
  // as if the change had come first, so that events of one instant give the same end in any order
  // (scaling its rounded end would differ by a picosecond).
  void reprice(std::size_t slot) {
    const double key = pricing_key(slot);
    const sim::Time now = engine_.now();
    for (std::size_t s = 0; s < kStreams; ++s) {
      StreamQueue& q = queues_[slot * kStreams + s];
      if (q.computing == kNoTask || q.priced_at == key) continue;
      q.priced_at = key;
      const double seconds = compute_seconds(graph_.tasks[q.computing], slot);
      if (seconds == q.seconds || q.end <= now) continue;
      const sim::Time end = q.started == now ? now + sim::Time::seconds(seconds)
                                             : now + sim::Time::seconds((q.end - now).to_seconds() * (seconds / q.seconds));
      q.seconds = seconds;
      if (end == q.end) continue;
      engine_.cancel(q.done);
      q.end = end;
      q.done = engine_.schedule(end, [this, t = q.computing] { compute_done(t); });
    }
  }

  void finish(TaskId t) {
    const Task& task = graph_.tasks[t];
    const sim::Time now = engine_.now();
    timeline_.spans[t].end = now;
    timeline_.step_time = std::max(timeline_.step_time, now);
    ++finished_;
    for (std::uint32_t s = task.succ_begin; s < task.succ_end; ++s) {
      const TaskId next = graph_.successors[s];
      if (deps_left_[next].count_down()) make_ready(next);
    }
    StreamQueue& q = queues_[queue_index(task)];
    q.busy = false;
    start_next(q);
  }

  // The graph has no dependency cycle (check_acyclic passed in run()), so what is left is an order of tasks
  // on their streams: a collective member holding its stream while a task queued behind it is
  // one its call waits for.
  [[noreturn]] void report_stuck() const {
    const StuckError::Blocker blocker = find_blocker();
    for (TaskId t = 0; t < graph_.tasks.size(); ++t) {
      const Task& task = graph_.tasks[t];
      if (!deps_left_[t].done()) {
        throw StuckError(fmt::format(
            "replay: {} of {} tasks never ran; task {} on rank {} still waits for {} dependencies "
            "(tasks queued on a stream behind a collective that waits for them; task {} holds its stream "
            "waiting for task {})",
            graph_.tasks.size() - finished_, graph_.tasks.size(), t, task.rank, deps_left_[t].left(),
            blocker.holder, blocker.missing),
            t, graph_.tasks.size() - finished_, blocker);
      }
    }
    throw InternalError(fmt::format("replay: {} of {} tasks never finished (a collective whose members "
                                    "did not all arrive)",
                                    graph_.tasks.size() - finished_, graph_.tasks.size()));
  }

  // The task holding `t`'s stream at the end, or kNoTask when the stream is free.
  TaskId stream_holder(TaskId t) const {
    const StreamQueue& q = queues_[queue_index(graph_.tasks[t])];
    return q.busy && q.head > 0 ? q.ready[q.head - 1] : kNoTask;
  }

  // A collective member that reached its call and holds its stream while a member of the same
  // call never arrived, and why that member did not.
  StuckError::Blocker find_blocker() const {
    StuckError::Blocker b;
    for (const StreamQueue& q : queues_) {
      if (!q.busy || q.head == 0 || q.computing != kNoTask) continue;
      const TaskId t = q.ready[q.head - 1];
      const Task& task = graph_.tasks[t];
      if (task.kind != TaskKind::Collective || awaiting_[task.call].done()) continue;
      for (const TaskId m : members_.of(task.call)) {
        if (stream_holder(m) == m) continue;
        b.holder = t;
        b.missing = m;
        b.missing_deps = deps_left_[m].left();
        if (deps_left_[m].done()) b.missing_behind = stream_holder(m);
        return b;
      }
    }
    return b;
  }

  sim::Engine& engine_;
  const StepGraph& graph_;
  std::span<const double> work_seconds_;
  Communicator& comm_;
  ExecutorOptions options_;
  Timeline timeline_;
  std::vector<sim::Countdown> deps_left_;  // per task: dependencies not yet finished
  std::vector<StreamQueue> queues_;
  std::vector<std::uint32_t> on_network_;  // per simulated rank: collectives/transfers in flight
  std::vector<double> hbm_demand_;         // per simulated rank: collective HBM bytes/s in flight
  std::vector<double> call_demand_;        // per call: what it added to each member's demand
  std::vector<double> collective_demand_;  // per collective: hbm_demand, -1 until its first call
  workload::CallMembers members_;
  std::vector<sim::Countdown> awaiting_;  // per call: members yet to reach it
  std::size_t finished_ = 0;
  // Setting micro-batches aside (ExecutorOptions::aside_lo, aside_hi): asked, still possible,
  // completions run and those of tasks and calls set aside.
  bool aside_ = options_.aside_hi > options_.aside_lo;
  bool aside_ok_ = true;
  std::uint64_t completions_ = 0, events_aside_ = 0;
};

}  // namespace

double collective_hbm_bytes(workload::CollectiveOp op, int ranks, double bytes) {
  if (ranks < 2) return 0;
  const bool reducing = op == workload::CollectiveOp::AllReduce || op == workload::CollectiveOp::ReduceScatter;
  const double n = ranks;
  return (2 * net::bus_bandwidth_factor(op, ranks) + (reducing ? (n - 1) / n : 0.0)) * bytes;
}

Timeline execute(sim::Engine& engine, const workload::StepGraph& graph,
                 std::span<const double> work_seconds, Communicator& comm,
                 const ExecutorOptions& options) {
  if (work_seconds.size() != graph.works.size()) {
    throw InternalError(fmt::format("replay: {} work durations for {} works", work_seconds.size(),
                                    graph.works.size()));
  }
  Run run(engine, graph, work_seconds, comm, options);
  return run.run();
}

}  // namespace trnsim::replay
