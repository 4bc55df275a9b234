// Fast-forward over the pipeline's steady state (contract in replay/fast_forward.hpp).
#include "trnsim/replay/fast_forward.hpp"

#include <algorithm>
#include <chrono>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "trnsim/error.hpp"
#include "trnsim/net/network_models.hpp"
#include "trnsim/replay/step_size.hpp"
#include "trnsim/workload/pipeline_schedule.hpp"

namespace trnsim::replay {
namespace {

// Micro-batches [lo, hi) whose units are all steady on every stage with `m` micro-batches; lo = hi
// when the steady ones are not one contiguous run (then nothing is fast-forwarded).
std::pair<std::int64_t, std::int64_t> steady_window(const workload::Plan& plan, std::int64_t m) {
  std::vector<bool> steady(static_cast<std::size_t>(m), true);
  for (std::int64_t stage = 0; stage < plan.pp; ++stage) {
    const auto order = workload::stage_schedule(plan.schedule, plan.pp, stage, m, plan.virtual_stages);
    std::size_t warmup = 0;  // the leading forwards
    while (warmup < order.size() && order[warmup].forward) ++warmup;
    std::size_t cooldown = order.size();  // the trailing backwards start here
    while (cooldown > 0 && !order[cooldown - 1].forward) --cooldown;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i < warmup || i >= cooldown) steady[static_cast<std::size_t>(order[i].micro_batch)] = false;
    }
  }
  const auto first = std::find(steady.begin(), steady.end(), true);
  const auto end = std::find(first, steady.end(), false);
  if (std::find(end, steady.end(), true) != steady.end()) return {0, 0};
  return {first - steady.begin(), end - steady.begin()};
}

// Whether M1 can be derived from M2 (derive_first, cut_first): the network sets calls aside, and
// replicas collapse into one call (one engine event) each, so that every event completes one
// task or call.
bool derivable(const StepInput& input) {
  return net::network_model(input.network).sets_aside && input.collapse_replicas;
}

// Same place in the schedule: same rank, stream, category, layer and work (or call description).
bool same_task(const workload::Task& a, const workload::Task& b) {
  return a.kind == b.kind && a.stream == b.stream && a.category == b.category && a.rank == b.rank &&
         a.layer == b.layer && a.stage == b.stage && a.index == b.index && a.peer == b.peer && a.bytes == b.bytes;
}

std::size_t tasks_outside_micro_batches(const workload::StepGraph& graph) {
  return static_cast<std::size_t>(
      std::count_if(graph.tasks.begin(), graph.tasks.end(), [](const workload::Task& t) { return t.micro_batch < 0; }));
}

}  // namespace

workload::ResolvedPlan with_micro_batches(const workload::ResolvedPlan& resolved, std::int64_t micro_batches) {
  workload::ResolvedPlan out = resolved;
  // As workload::make_plan divides it: micro-batches = global_batch / (dp x micro_batch).
  const std::int64_t per_micro_batch = resolved.parallelism.dp * resolved.training.micro_batch.value_or(1);
  out.training.global_batch = micro_batches * per_micro_batch;
  return out;
}

std::optional<FastForwardShape> fast_forward_shape(const StepInput& input, const workload::ResolvedPlan& resolved,
                                                   std::string* why, std::int64_t cycle) {
  auto refuse = [&](std::string reason) -> std::optional<FastForwardShape> {
    spdlog::debug("fast-forward: {}: {}", cycle != 0 ? "no room for the cycle" : "not tried", reason);
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const workload::Plan plan =
      workload::make_plan(input.model, resolved.training, resolved.parallelism, input.cluster.ranks());
  if (plan.schedule == workload::PipelineSchedule::GPipe) return refuse("gpipe has no steady state");
  FastForwardShape s;
  s.micro_batches = plan.micro_batches;
  const bool interleaved = plan.schedule == workload::PipelineSchedule::Interleaved && plan.virtual_stages > 1;
  s.base_period = interleaved ? plan.pp : 1;
  if (cycle != 0 && (cycle <= s.base_period || cycle % s.base_period != 0))
    throw InternalError(fmt::format("fast-forward: a cycle of {} micro-batches, period {}", cycle, s.base_period));
  s.period = cycle != 0 ? cycle : s.base_period;
  // The checked micro-batches: at least two periods, and at least pp shifts of the period (a cycle
  // of the pipeline as deep as its stages shows within them), the same for a longer cycle foretold
  // (predicted_cycle) or found in a failed check (steady_cycle).
  const std::int64_t checked = std::max(2 * s.period, plan.pp + s.period);
  // M1 keeps M's residue modulo d (interleaving needs a multiple of pp: M is one, so is M1). Its
  // one steady period follows from M2's checked count (checked >= 2 d, and M2 has d more steady
  // micro-batches than M1), kept as a guard: M2's checked micro-batches and the step difference
  // (below) decide whether M1 is M2 with a period cut out. Two periods, as first built, cost
  // gpt3-175b-a100 a sixth of its fast-forward (48 + 56 micro-batches replayed, not 40 + 48).
  // Where the network sets calls aside (analytic), M1 is derived from M2 (derive_first) and
  // only M2 is replayed; else both are.
  const bool derived = derivable(input);
  std::int64_t m1 = s.micro_batches % s.period == 0 ? s.period : s.micro_batches % s.period;
  for (;; m1 += s.period) {
    if ((derived ? 0 : m1) + m1 + s.period >= s.micro_batches)
      return refuse(fmt::format("{} micro-batches: {}{} would take as many", s.micro_batches,
                                derived ? "a reduced replay" : "two reduced replays",
                                cycle != 0 ? fmt::format(" of a {}-micro-batch cycle", cycle) : std::string()));
    const auto [lo, hi] = steady_window(plan, m1);
    const auto [lo2, hi2] = steady_window(plan, m1 + s.period);
    if (hi - lo >= s.period && hi2 - lo2 >= checked) break;
  }
  s.reduced = m1;
  s.periods = (s.micro_batches - m1) / s.period;
  std::tie(s.steady_lo, s.steady_hi) = steady_window(plan, m1 + s.period);
  s.check_lo = s.steady_hi - checked;
  spdlog::debug("fast-forward: {} micro-batches as {} + {} periods of {}; checking micro-batches [{}, {}) of {}",
                s.micro_batches, s.reduced, s.periods, s.period, s.check_lo, s.steady_hi, s.reduced + s.period);
  return s;
}

namespace {

// The tasks of micro-batches [lo, hi) per (simulated rank, micro-batch), in id order: the build
// emits a rank's tasks of one unit in one order, so the i-th of micro-batch j and of j + d
// correspond. Gathered once, compared for as many periods as asked (steady_cycle).
class WindowTasks {
 public:
  WindowTasks(const workload::StepGraph& g, std::int64_t lo, std::int64_t hi)
      : graph_(&g), ranks_(g.simulated_ranks.size()), span_(std::max<std::int64_t>(hi - lo, 0)),
        tasks_(ranks_ * static_cast<std::size_t>(span_)) {
    for (std::size_t t = 0; t < g.tasks.size(); ++t) {
      const workload::Task& task = g.tasks[t];
      if (task.micro_batch < lo || task.micro_batch >= hi) continue;
      tasks_[slot(g.rank_slot(task.rank), task.micro_batch - lo)].push_back(static_cast<workload::TaskId>(t));
    }
  }

  // The one shift every task has against its counterpart `d` micro-batches later, in start,
  // active and end, or nullopt (none compared, a shift not positive, or two that differ).
  std::optional<sim::Time> shift(std::int64_t d, const Timeline& timeline) const {
    const auto& spans = timeline.spans;
    std::optional<sim::Time> period;
    for (std::size_t r = 0; r < ranks_; ++r) {
      for (std::int64_t j = 0; j + d < span_; ++j) {
        const auto& a = tasks_[slot(r, j)];
        const auto& b = tasks_[slot(r, j + d)];
        if (a.size() != b.size()) return std::nullopt;
        for (std::size_t i = 0; i < a.size(); ++i) {
          if (!same_task(graph_->tasks[a[i]], graph_->tasks[b[i]])) return std::nullopt;
          const Span& x = spans[a[i]];
          const Span& y = spans[b[i]];
          if (!period) period = y.start - x.start;
          if (y.start - x.start != *period || y.active - x.active != *period || y.end - x.end != *period)
            return std::nullopt;
        }
      }
    }
    if (!period || *period <= sim::Time::zero()) return std::nullopt;
    return period;
  }

 private:
  std::size_t slot(std::size_t rank, std::int64_t j) const {
    return rank * static_cast<std::size_t>(span_) + static_cast<std::size_t>(j);
  }

  const workload::StepGraph* graph_;
  std::size_t ranks_;
  std::int64_t span_;
  std::vector<std::vector<workload::TaskId>> tasks_;
};

// The second and third conditions of steady_state_repeats, the first being steady_period's.
bool same_outside_and_step(const StepRun& first, const StepRun& second, sim::Time period) {
  return tasks_outside_micro_batches(first.graph) == tasks_outside_micro_batches(second.graph) &&
         second.timeline.step_time - first.timeline.step_time == period;
}

// Task ids of a graph grouped by (simulated rank, micro-batch), in id order: bucket
// slot x (M + 1) + micro-batch + 1, where the tasks outside the micro-batches are micro-batch -1.
class TasksByMicroBatch {
 public:
  TasksByMicroBatch(const workload::StepGraph& g, std::int64_t micro_batches)
      : per_rank_(static_cast<std::size_t>(micro_batches) + 1),
        first_(g.simulated_ranks.size() * per_rank_ + 1, 0),
        ids_(g.tasks.size()) {
    // A counting sort; each task's bucket is found once (a rank's slot is a lookup).
    std::vector<std::uint32_t> buckets(g.tasks.size());
    for (std::size_t t = 0; t < g.tasks.size(); ++t) {
      buckets[t] = static_cast<std::uint32_t>(bucket(g, g.tasks[t]));
      ++first_[buckets[t] + 1];
    }
    for (std::size_t b = 1; b < first_.size(); ++b) first_[b] += first_[b - 1];
    std::vector<std::uint32_t> next(first_.begin(), first_.end() - 1);
    for (std::size_t t = 0; t < g.tasks.size(); ++t) ids_[next[buckets[t]]++] = static_cast<workload::TaskId>(t);
  }
  std::span<const workload::TaskId> of(std::size_t slot, std::int64_t micro_batch) const {
    const std::size_t b = slot * per_rank_ + static_cast<std::size_t>(micro_batch + 1);
    return {ids_.data() + first_[b], first_[b + 1] - first_[b]};
  }

 private:
  std::size_t bucket(const workload::StepGraph& g, const workload::Task& t) const {
    return g.rank_slot(t.rank) * per_rank_ + static_cast<std::size_t>(std::max<std::int64_t>(t.micro_batch, -1) + 1);
  }
  std::size_t per_rank_;
  std::vector<std::uint32_t> first_;
  std::vector<workload::TaskId> ids_;
};

// The period cut out of the M2 replay to give M1: micro-batches [lo, hi) = [check_lo, check_lo +
// d), which ran from `start` to `end`, and the shift P of what follows them.
class Cut {
 public:
  // nullopt where `second` did not set exactly those micro-batches aside.
  static std::optional<Cut> of(const FastForwardShape& shape, const StepRun& second, sim::Time period) {
    Cut c;
    c.lo = shape.check_lo;
    c.hi = shape.check_lo + shape.period;
    c.period = period;
    if (!second.timeline.set_aside || second.aside.lo != c.lo || second.aside.hi != c.hi) return std::nullopt;
    const auto& spans = second.timeline.spans;
    const workload::StepGraph& g = second.graph;
    for (std::size_t t = 0; t < g.tasks.size(); ++t) {
      if (!c.inside(g.tasks[t].micro_batch)) continue;
      c.start = std::min(c.start, spans[t].start);
      c.end = std::max(c.end, spans[t].end);
    }
    if (c.start > c.end) return std::nullopt;  // nothing ran in the cut
    // Every member of a collective call is cut out, or moved by one shift: a call whose members
    // the cut parts (one before it and one after) has no time in M1.
    constexpr std::uint8_t kUnseen = 0, kCut = 1, kKept = 2, kMoved = 3;
    std::vector<std::uint8_t> call(g.calls, kUnseen);
    for (std::size_t t = 0; t < g.tasks.size(); ++t) {
      const workload::Task& task = g.tasks[t];
      if (task.kind != workload::TaskKind::Collective || task.call >= g.calls) continue;
      const std::optional<sim::Time> s = c.inside(task.micro_batch) ? sim::Time::zero() : c.shift(task.micro_batch, spans[t]);
      if (!s) return std::nullopt;
      const std::uint8_t state = c.inside(task.micro_batch) ? kCut : (*s == period ? kMoved : kKept);
      if (call[task.call] != kUnseen && call[task.call] != state) return std::nullopt;
      call[task.call] = state;
    }
    return c;
  }
  bool inside(std::int64_t micro_batch) const { return micro_batch >= lo && micro_batch < hi; }
  // How much earlier an M2 task of `micro_batch` that ran over `s` runs in M1: nothing before the
  // cut, a period after it; a task outside the micro-batches by when it runs (nullopt: during
  // the cut, which M1 cannot say).
  std::optional<sim::Time> shift(std::int64_t micro_batch, const Span& s) const {
    if (micro_batch >= 0) return micro_batch < lo ? sim::Time::zero() : period;
    if (s.start >= end) return period;
    if (s.end <= start) return sim::Time::zero();
    return std::nullopt;
  }
  // M2's span `s` moved `shift` earlier, and the end of the derived step `timeline` past it.
  static Span place(Timeline& timeline, const Span& s, sim::Time shift) {
    timeline.step_time = std::max(timeline.step_time, s.end - shift);
    return Span{s.start - shift, s.active - shift, s.end - shift};
  }
  // Completes M1's `timeline` and links (first.links, on M2's fabric), derived from M2 (`second`):
  // M2's events less those of the cut, M2's links without the cut's calls (moved out of
  // second.aside). False, with nothing moved, where the derived step is not M2's less the period.
  bool complete(Timeline& timeline, StepRun& first, StepRun& second) const {
    if (timeline.step_time != second.timeline.step_time - period) return false;
    timeline.events = second.timeline.events - second.timeline.events_aside;
    first.links = std::move(second.aside.links_without);
    first.fabric = second.fabric;
    return true;
  }

  std::int64_t lo = 0, hi = 0;
  sim::Time start = sim::Time::max(), end = sim::Time::zero(), period;
};

}  // namespace

bool derive_first(const FastForwardShape& shape, StepRun& first, StepRun& second, sim::Time period) {
  const workload::StepGraph& g1 = first.graph;
  const workload::StepGraph& g2 = second.graph;
  if (first.plan.micro_batches != shape.reduced || second.plan.micro_batches != shape.reduced + shape.period)
    return false;
  const std::optional<Cut> cut = Cut::of(shape, second, period);
  if (!cut || g1.simulated_ranks != g2.simulated_ranks || g2.tasks.size() < g1.tasks.size()) return false;
  const auto& spans2 = second.timeline.spans;
  const std::int64_t lo = cut->lo;
  const std::int64_t m1 = shape.reduced;
  const TasksByMicroBatch by1(g1, m1), by2(g2, m1 + shape.period);
  Timeline timeline;
  timeline.spans.resize(g1.tasks.size());
  for (std::size_t slot = 0; slot < g1.simulated_ranks.size(); ++slot) {
    for (std::int64_t j = -1; j < m1; ++j) {
      const auto ids1 = by1.of(slot, j);
      const auto ids2 = by2.of(slot, j < lo ? j : j + shape.period);
      if (ids1.size() != ids2.size()) return false;
      for (std::size_t i = 0; i < ids1.size(); ++i) {
        if (!same_task(g1.tasks[ids1[i]], g2.tasks[ids2[i]])) return false;
        const Span& s = spans2[ids2[i]];
        const std::optional<sim::Time> shift = cut->shift(j, s);
        if (!shift) return false;  // runs while the micro-batches cut out do
        timeline.spans[ids1[i]] = Cut::place(timeline, s, *shift);
      }
    }
  }
  // A dependency of M1's is over before its successor starts, as in any replay.
  for (std::size_t t = 0; t < g1.tasks.size(); ++t) {
    for (std::uint32_t e = g1.tasks[t].succ_begin; e < g1.tasks[t].succ_end; ++e) {
      if (timeline.spans[g1.successors[e]].start < timeline.spans[t].end) return false;
    }
  }
  if (!cut->complete(timeline, first, second)) return false;
  first.timeline = std::move(timeline);
  return true;
}

std::optional<StepRun> cut_first(const StepInput& input, const FastForwardShape& shape, StepRun& second,
                                 sim::Time period) {
  const std::optional<Cut> cut = Cut::of(shape, second, period);
  if (!cut) return std::nullopt;
  const auto t0 = std::chrono::steady_clock::now();
  const workload::StepGraph& g2 = second.graph;
  StepRun first;
  first.resolved = with_micro_batches(second.resolved, shape.reduced);
  first.plan = workload::make_plan(input.model, first.resolved.training, first.resolved.parallelism, second.ranks);
  // Everything but the tasks and their edges is M2's: the works, collectives and groups of a
  // period are those of every other.
  workload::StepGraph& g1 = first.graph;
  g1.works = g2.works;
  g1.collectives = g2.collectives;
  g1.group_sets = g2.group_sets;
  g1.simulated_ranks = g2.simulated_ranks;
  g1.total_ranks = g2.total_ranks;
  g1.replica_sets = g2.replica_sets;
  g1.calls = g2.calls;
  g1.findings = g2.findings;
  g1.slot_by_rank = g2.slot_by_rank;
  // The kept tasks in the order each stream runs them, as a build lists them (the analysis
  // sweeps a stream's tasks in that order): per (rank, stream), those that kept their time and
  // those moved a period earlier are each in M2's order, and are merged by start.
  constexpr std::size_t kStreams = workload::kStreamCount;
  const std::size_t lists = g2.simulated_ranks.size() * kStreams * 2;
  std::vector<std::uint32_t> list_of(g2.tasks.size(), 0xffffffffu), first_of(lists + 1, 0);
  for (std::size_t t = 0; t < g2.tasks.size(); ++t) {
    const workload::Task& task = g2.tasks[t];
    if (cut->inside(task.micro_batch)) continue;
    const std::optional<sim::Time> shift = cut->shift(task.micro_batch, second.timeline.spans[t]);
    if (!shift) return std::nullopt;  // runs while the micro-batches cut out do
    list_of[t] = static_cast<std::uint32_t>((g2.rank_slot(task.rank) * kStreams + static_cast<std::size_t>(task.stream)) * 2 +
                                            (*shift == period ? 1 : 0));
    ++first_of[list_of[t] + 1];
  }
  for (std::size_t l = 1; l < first_of.size(); ++l) first_of[l] += first_of[l - 1];
  std::vector<workload::TaskId> by_list(first_of.back());
  std::vector<std::uint32_t> next(first_of.begin(), first_of.end() - 1);
  for (std::size_t t = 0; t < g2.tasks.size(); ++t) {
    if (list_of[t] != 0xffffffffu) by_list[next[list_of[t]]++] = static_cast<workload::TaskId>(t);
  }
  g1.tasks.reserve(by_list.size());
  first.timeline.spans.reserve(by_list.size());
  auto keep = [&](workload::TaskId t, sim::Time shift) {
    workload::Task task = g2.tasks[t];
    if (task.micro_batch >= cut->hi) task.micro_batch -= static_cast<std::int32_t>(shape.period);
    task.deps = task.succ_begin = task.succ_end = 0;
    g1.tasks.push_back(task);
    first.timeline.spans.push_back(Cut::place(first.timeline, second.timeline.spans[t], shift));
  };
  for (std::size_t l = 0; l < lists; l += 2) {
    std::uint32_t a = first_of[l], b = first_of[l + 1];
    const std::uint32_t a_end = first_of[l + 1], b_end = first_of[l + 2];
    const std::size_t from = first.timeline.spans.size();
    while (a < a_end || b < b_end) {
      const bool take_a = b == b_end || (a < a_end && second.timeline.spans[by_list[a]].start <=
                                                          second.timeline.spans[by_list[b]].start - period);
      if (take_a) {
        keep(by_list[a++], sim::Time::zero());
      } else {
        keep(by_list[b++], period);
      }
    }
    // A stream runs one task at a time, in M1 as in any replay.
    for (std::size_t i = from + 1; i < first.timeline.spans.size(); ++i) {
      if (first.timeline.spans[i].start < first.timeline.spans[i - 1].end) return std::nullopt;
    }
  }
  if (!cut->complete(first.timeline, first, second)) return std::nullopt;
  first.work_costs = second.work_costs;
  first.work_seconds = second.work_seconds;
  first.comm_compute_slowdown = second.comm_compute_slowdown;
  first.memory = workload::estimate_memory(input.model, first.resolved.training, first.resolved.parallelism, input.software);
  first.rank_memory_capacity = second.rank_memory_capacity;
  first.ranks = second.ranks;
  first.physical_cores_per_rank = second.physical_cores_per_rank;
  first.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return first;
}

std::optional<std::int64_t> steady_cycle(const FastForwardShape& shape, const StepRun& second) {
  // Every multiple of the schedule's period that leaves at least one period of micro-batches to
  // compare in the steady window; the first that repeats. A failed comparison usually fails at
  // its first tasks, so each candidate costs little; the tasks are gathered once.
  const WindowTasks window(second.graph, shape.steady_lo, shape.steady_hi);
  for (std::int64_t d = 2 * shape.base_period; d + shape.base_period <= shape.steady_hi - shape.steady_lo;
       d += shape.base_period) {
    if (window.shift(d, second.timeline)) return d;
  }
  return std::nullopt;
}

std::optional<sim::Time> steady_period(const FastForwardShape& shape, const StepRun& second) {
  return WindowTasks(second.graph, shape.check_lo, shape.steady_hi).shift(shape.period, second.timeline);
}

bool steady_state_repeats(const FastForwardShape& shape, const StepRun& first, const StepRun& second, sim::Time period) {
  if (!same_outside_and_step(first, second, period)) return false;
  const std::optional<sim::Time> p = steady_period(shape, second);
  return p && *p == period;
}

std::int64_t predicted_cycle(const StepInput& input, const workload::ResolvedPlan& resolved,
                             const FastForwardShape& shape) {
  if (shape.base_period != 1) return 0;
  const workload::Plan plan =
      workload::make_plan(input.model, resolved.training, resolved.parallelism, input.cluster.ranks());
  if (plan.schedule != workload::PipelineSchedule::OneFOneB && plan.schedule != workload::PipelineSchedule::Interleaved)
    return 0;
  // Without two stages holding more layers than the rest, none ties: the split rule
  // (workload/plan.hpp) gives the first and last stages no more layers than any other and adds the
  // embedding and the LM head to them (layers alike; a mixture of experts' dense layers could tie
  // elsewhere, unseen). So an even split, and pp < 3, are decided without a build.
  std::vector<std::int64_t> layers(static_cast<std::size_t>(plan.pp));
  for (std::int64_t stage = 0; stage < plan.pp; ++stage)
    layers[static_cast<std::size_t>(stage)] = plan.stage_layers(input.model.layers, stage);
  const auto most = std::count(layers.begin(), layers.end(), *std::max_element(layers.begin(), layers.end()));
  if (most < 2 || most == plan.pp) return 0;
  // One micro-batch: every micro-batch runs the same tasks, so its compute per stage is the
  // stage's load, for about a 49th of the build of the 405B's check of its own period (M2 = 49).
  // Priced, never replayed: built without the replicas' lists.
  const StepRun probe = prepare_step(input, with_micro_batches(resolved, 1), false);
  const workload::StepGraph& g = probe.graph;
  std::vector<double> rank_load(g.simulated_ranks.size(), 0.0);
  std::vector<double> stage_load(static_cast<std::size_t>(plan.pp), 0.0);
  for (const workload::Task& t : g.tasks) {
    if (t.kind == workload::TaskKind::Compute && t.micro_batch == 0) rank_load[g.rank_slot(t.rank)] += probe.work_seconds[t.index];
  }
  for (const workload::Task& t : g.tasks) {
    if (t.stage < 0 || t.stage >= plan.pp) continue;
    double& load = stage_load[static_cast<std::size_t>(t.stage)];
    load = std::max(load, rank_load[g.rank_slot(t.rank)]);
  }
  const double heaviest = *std::max_element(stage_load.begin(), stage_load.end());
  const auto tied = std::count(stage_load.begin(), stage_load.end(), heaviest);
  return tied >= 2 && tied < plan.pp ? static_cast<std::int64_t>(tied) : 0;
}

namespace {

// fast_forward_runs once its memory guard has passed and the shape to try is chosen: `retry`
// allows one more shape, of the cycle a failed check's replay repeats over.
std::optional<FastForwardRuns> checked_runs(const StepInput& input, const workload::ResolvedPlan& resolved,
                                            const FastForwardShape& shape, std::shared_ptr<net::Fabric> fabric,
                                            FirstGraph graph, bool retry) {
  FastForwardRuns out;
  out.shape = shape;
  // M2 first: when its steady state does not repeat, M1 is not replayed at all. The micro-batches
  // that make M2 longer than M1 are set aside, so that M1 can be derived from M2 (derive_first).
  out.second = prepare_step(input, with_micro_batches(resolved, shape.reduced + shape.period));
  if (derivable(input)) out.second.aside = {shape.check_lo, shape.check_lo + shape.period, {}};
  replay_step(input, out.second, fabric);
  out.replayed = shape.reduced + shape.period;
  const std::optional<sim::Time> period = steady_period(shape, out.second);
  if (!period) {
    spdlog::debug("fast-forward: the {}-micro-batch replay does not repeat every {} micro-batch(es)",
                  shape.reduced + shape.period, shape.period);
    // A steady state that repeats over another cycle than the shape's (one the stage loads did not
    // foretell, predicted_cycle) is tried once more with that cycle as its period, where the plan
    // has room for it. The evidence for a cycle can be thin (a period of compared
    // micro-batches): a wrong one costs the replay of its shape, whose check refuses it, before
    // the full replay.
    if (retry) {
      const std::optional<std::int64_t> cycle = steady_cycle(shape, out.second);
      if (cycle && *cycle != shape.period) {
        spdlog::debug("fast-forward: its steady micro-batches [{}, {}) repeat every {}", shape.steady_lo,
                      shape.steady_hi, *cycle);
        if (const auto longer = fast_forward_shape(input, resolved, nullptr, *cycle)) {
          // The failed replay is released first: the memory guard sized the full step, not three replays.
          const double build_s = out.second.build_seconds, simulate_s = out.second.simulate_seconds;
          const std::int64_t replayed = out.replayed;
          out = FastForwardRuns{};
          auto runs = checked_runs(input, resolved, *longer, std::move(fabric), graph, false);
          if (runs) {  // the failed replay counts too
            runs->second.build_seconds += build_s;
            runs->second.simulate_seconds += simulate_s;
            runs->replayed += replayed;
          }
          return runs;
        }
      }
    }
    spdlog::debug("fast-forward: full replay");
    return std::nullopt;
  }
  if (graph == FirstGraph::TasksOnly) {
    if (auto cut = cut_first(input, shape, out.second, *period)) {
      out.first = std::move(*cut);
      out.derived = true;
      out.first_graph = FirstGraph::TasksOnly;
    }
  }
  if (!out.derived) {
    out.first = prepare_step(input, with_micro_batches(resolved, shape.reduced));
    out.derived = derive_first(shape, out.first, out.second, *period);
  }
  if (!out.derived) {
    if (derivable(input)) {
      // The shape counted on one replay: with two, the full one may cost less.
      if (2 * shape.reduced + shape.period >= shape.micro_batches) {
        spdlog::debug("fast-forward: the {}-micro-batch replay could not be derived, and a second reduced replay "
                      "would cost as much as the full one: full replay", shape.reduced);
        return std::nullopt;
      }
      spdlog::debug("fast-forward: the {}-micro-batch replay could not be derived from the {}-micro-batch one: "
                    "replayed", shape.reduced, shape.reduced + shape.period);
    }
    replay_step(input, out.first, fabric);
    out.replayed += shape.reduced;
  }
  out.period = *period;
  // steady_state_repeats, whose check of M2 (steady_period) has just passed.
  if (!same_outside_and_step(out.first, out.second, out.period)) {
    spdlog::debug("fast-forward: the {}- and {}-micro-batch replays differ by other than one period: full replay",
                  shape.reduced, shape.reduced + shape.period);
    return std::nullopt;
  }
  // The real step in picoseconds; past the clock's range the full replay reports it as an error.
  sim::Time::Rep added = 0, total = 0;
  if (__builtin_mul_overflow(out.period.picoseconds(), shape.periods, &added) ||
      __builtin_add_overflow(out.first.timeline.step_time.picoseconds(), added, &total))
    return std::nullopt;
  out.step_time = sim::Time::ps(total);
  return out;
}

}  // namespace

std::optional<FastForwardRuns> fast_forward_runs(const StepInput& input, const workload::ResolvedPlan& resolved,
                                                 const FastForwardShape& shape, std::shared_ptr<net::Fabric> fabric,
                                                 FirstGraph graph) {
  // The memory guard of the real step (step_size.hpp): a failed check falls back to replaying it.
  const workload::Plan plan =
      workload::make_plan(input.model, resolved.training, resolved.parallelism, input.cluster.ranks());
  check_step_size(estimate_step_size(input.cluster, input.model, plan, input.symmetric), input.max_memory_bytes);
  if (!fabric) fabric = std::make_shared<net::Fabric>(input.cluster);
  FastForwardShape tried = shape;
  double probe_s = 0;  // wall time of predicted_cycle's build, counted with the builds
  if (shape.period == shape.base_period) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t cycle = predicted_cycle(input, resolved, shape);
    probe_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (cycle != 0) {
      if (const auto longer = fast_forward_shape(input, resolved, nullptr, cycle)) {
        spdlog::debug("fast-forward: {} stages tie for the heaviest load: that cycle tried first", cycle);
        tried = *longer;
      }
    }
  }
  auto runs = checked_runs(input, resolved, tried, std::move(fabric), graph, true);
  if (runs) runs->second.build_seconds += probe_s;
  return runs;
}

double extrapolate(double a, double b, std::int64_t k) { return a + static_cast<double>(k) * (b - a); }
std::int64_t extrapolate(std::int64_t a, std::int64_t b, std::int64_t k) { return a + k * (b - a); }
std::uint64_t extrapolate(std::uint64_t a, std::uint64_t b, std::int64_t k) {
  const auto diff = static_cast<std::int64_t>(b) - static_cast<std::int64_t>(a);
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(a) + k * diff);
}

double step_time_seconds(const StepInput& input, const workload::ResolvedPlan& resolved, bool fast_forward,
                         std::shared_ptr<net::Fabric> fabric, bool* fast_forwarded) {
  if (fast_forwarded != nullptr) *fast_forwarded = false;
  if (fast_forward) {
    if (const auto shape = fast_forward_shape(input, resolved)) {
      if (const auto runs = fast_forward_runs(input, resolved, *shape, fabric, FirstGraph::TasksOnly)) {
        if (fast_forwarded != nullptr) *fast_forwarded = true;
        return runs->step_time.to_seconds();
      }
    }
  }
  StepRun run = prepare_step(input, resolved);
  replay_step(input, run, std::move(fabric));
  return run.timeline.step_time.to_seconds();
}

}  // namespace trnsim::replay
