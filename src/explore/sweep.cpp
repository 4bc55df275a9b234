// trnsim sweep's runner: one parse per --vary combination, then each point of this shard checked,
// sized and simulated on a pool of threads (contracts in explore/sweep.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <mutex>
#include <thread>
#include <tuple>

#include <fmt/core.h>

#include "trnsim/config/step_input.hpp"
#include "trnsim/enum_names.hpp"
#include "trnsim/error.hpp"
#include "trnsim/explore/sweep.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/replay/step_size.hpp"
#include "trnsim/sim/time.hpp"
#include "trnsim/report/analysis/fast_forward.hpp"
#include "trnsim/report/analysis/step_report.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::explore {

std::string_view status_name(PlanStatus s) {
  switch (s) {
    case PlanStatus::Simulated: return "simulated";
    case PlanStatus::OutOfMemory: return "out_of_memory";
    case PlanStatus::Invalid: return "invalid";
    case PlanStatus::Pruned: return "pruned";
  }
  return "invalid";
}

namespace {

// One --vary combination: its values and the experiment parsed with them.
struct Combination {
  std::vector<std::string> values;
  config::Experiment experiment;
};

std::vector<Combination> combinations(const nlohmann::json& document, const std::string& file,
                                      const std::vector<VaryAxis>& axes, const std::vector<std::string>& fixed) {
  std::vector<Combination> out;
  std::vector<std::size_t> at(axes.size(), 0);
  for (;;) {
    Combination c;
    std::vector<std::string> overrides = fixed;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      c.values.push_back(axes[i].values[at[i]]);
      overrides.push_back(axes[i].path + "=" + axes[i].values[at[i]]);
    }
    c.experiment = config::parse_experiment(document, file, overrides, config::PlanCheck::Deferred);
    out.push_back(std::move(c));
    // Odometer over the axes, the last fastest (enumeration order: the first axis outermost).
    std::size_t i = axes.size();
    while (i > 0 && ++at[i - 1] == axes[i - 1].values.size()) at[--i] = 0;
    if (i == 0) return out;
  }
}

void record_plan(PlanOutcome& o, const workload::TrainingSpec& t, const workload::ParallelismSpec& p) {
  o.tp = p.tp;
  o.pp = p.pp;
  o.dp = p.dp;
  o.micro_batch = t.micro_batch;
  o.virtual_stages = p.virtual_stages;
  o.zero = p.zero;
  if (p.schedule) o.schedule = std::string(to_string(*p.schedule));
  if (p.recompute) o.recompute = workload::recompute_text(*p.recompute);
  o.sequence_parallel = p.sequence_parallel;
}

void reject(PlanOutcome& o, const InputError& e) {
  o.status = PlanStatus::Invalid;
  o.detail = e.what();
  o.reason = e.reason().empty() ? o.detail : e.reason();
}

// A point that is valid and fits: what its simulation needs.
struct Admitted {
  replay::StepInput input;
  workload::ResolvedPlan resolved;
  std::size_t combination = 0;  // its --vary combination: plans of one share their cluster
};

// A worker thread's fabric (net/fabric.hpp): the topology and routes of the combination it last
// simulated, reused while its plans stay on that cluster. The figures do not depend on it.
struct WorkerFabric {
  std::size_t combination = std::numeric_limits<std::size_t>::max();
  std::shared_ptr<net::Fabric> fabric;
  std::shared_ptr<net::Fabric> of(const Admitted& a) {
    if (!fabric || combination != a.combination) {
      fabric = std::make_shared<net::Fabric>(a.input.cluster);
      combination = a.combination;
    }
    return fabric;
  }
};

// Checks the point and sizes it against memory: the outcome is final (invalid, out of memory)
// unless a plan to simulate is returned.
std::optional<Admitted> admit(const PlanPoint& point, const config::Experiment& ex, PlanOutcome& o) {
  replay::StepInput in = config::step_input(ex);
  in.training = point.training;
  in.parallelism = point.parallelism;
  record_plan(o, in.training, in.parallelism);
  o.dp = point.dp;
  const std::int64_t ranks = in.cluster.ranks();
  // The experiment's context parallelism (no sweep axis) takes its share of the ranks too.
  const std::int64_t cp = in.parallelism.cp;
  const std::int64_t tp_pp = in.parallelism.tp * in.parallelism.pp * cp;
  if (point.dp) {
    in.parallelism.dp = *point.dp;
  } else if (tp_pp < 1 || ranks % tp_pp != 0) {
    reject(o, cp == 1 ? InputError(fmt::format("/parallelism: tp x pp = {} does not divide the cluster's {} ranks", tp_pp, ranks),
                                   "tp x pp does not divide the cluster's ranks")
                      : InputError(fmt::format("/parallelism: tp x pp x cp = {} does not divide the cluster's {} ranks",
                                               tp_pp, ranks),
                                   "tp x pp x cp does not divide the cluster's ranks"));
    return std::nullopt;
  } else {
    in.parallelism.dp = ranks / tp_pp;
    o.dp = in.parallelism.dp;
  }
  try {
    workload::check_plan(in.model, in.training, in.parallelism, ranks);
    workload::ResolvedPlan resolved = replay::resolve_plan(in);
    record_plan(o, resolved.training, resolved.parallelism);
    const workload::MemoryEstimate memory =
        workload::estimate_memory(in.model, resolved.training, resolved.parallelism, in.software);
    o.capacity_bytes = replay::rank_memory_capacity(in.cluster);
    o.peak_memory_bytes = memory.peak().total();
    if (o.peak_memory_bytes > o.capacity_bytes) {
      o.status = PlanStatus::OutOfMemory;
      o.detail = workload::memory_findings(memory, o.capacity_bytes).front();
      return std::nullopt;
    }
    return Admitted{std::move(in), std::move(resolved)};
  } catch (const InputError& e) {
    reject(o, e);
    return std::nullopt;
  }
}

// `fast_forward`: over the pipeline's steady state where exact (report/analysis/fast_forward.hpp).
void simulate(const Admitted& a, PlanOutcome& o, bool fast_forward, WorkerFabric* fabric = nullptr) {
  try {
    const report::AnalyzeOptions analysis{.critical_path = false, .bottleneck_rank = std::nullopt};
    const report::StepReport rep = report::simulate_and_analyze(a.input, a.resolved, fast_forward, analysis,
                                                                fabric != nullptr ? fabric->of(a) : nullptr);
    o.status = PlanStatus::Simulated;
    o.step_time_s = rep.step_time_s;
    o.tokens_per_s = rep.tokens_per_s;
    o.mfu = rep.mfu;
    o.breakdown = rep.breakdown.seconds;
    if (!rep.findings.empty()) {
      o.finding_rule = rep.findings.front().rule;
      o.finding = rep.findings.front().message;
    }
  } catch (const InputError& e) {
    reject(o, e);
  }
}

// The step size of an admitted point, or nullopt when its plan fails where simulate would reject it.
std::optional<PlanSize> step_size_of(const Admitted& a, const PlanOutcome& o) {
  try {
    const workload::Plan plan =
        workload::make_plan(a.input.model, a.resolved.training, a.resolved.parallelism, a.input.cluster.ranks());
    const replay::StepSize size = replay::estimate_step_size(a.input.cluster, a.input.model, plan, a.input.symmetric);
    return PlanSize{size.bytes, size.tasks,
                    fmt::format("tp {}, pp {}, dp {}, micro-batch {}", o.tp.value_or(0), o.pp.value_or(0),
                                o.dp.value_or(0), o.micro_batch.value_or(0))};
  } catch (const InputError&) {
    return std::nullopt;
  }
}

// A point checked, sized and, when it fits, simulated; `combination` and `fabric` as in simulate.
PlanOutcome evaluate(const config::Experiment& ex, const PlanPoint& point, std::size_t combination, bool fast_forward,
                     WorkerFabric* fabric) {
  PlanOutcome o;
  if (std::optional<Admitted> a = admit(point, ex, o)) {
    a->combination = combination;
    simulate(*a, o, fast_forward, fabric);
  }
  return o;
}

// A lower bound of the plan's step time: its busiest rank's compute tasks back to back at their
// full-speed durations. A rank's compute stream runs one task at a time, and sharing HBM with
// collectives or SMs with NCCL only slows a task, so no replay of the plan can be shorter. In
// picoseconds as the engine times them (each duration rounded to the picosecond), less one
// picosecond per task for a rounding when a running task is repriced.
double compute_lower_bound(const Admitted& a) {
  const replay::StepRun run = replay::prepare_step(a.input, a.resolved);
  std::vector<std::int64_t> per_rank;
  for (const workload::Task& t : run.graph.tasks) {
    if (t.kind != workload::TaskKind::Compute) continue;
    const auto r = static_cast<std::size_t>(t.rank);
    if (r >= per_rank.size()) per_rank.resize(r + 1, 0);
    per_rank[r] += sim::Time::seconds(run.work_seconds[t.index]).picoseconds() - 1;
  }
  const std::int64_t ps = per_rank.empty() ? 0 : *std::max_element(per_rank.begin(), per_rank.end());
  return sim::Time::ps(std::max<std::int64_t>(ps, 0)).to_seconds();
}

}  // namespace

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t)>& progress,
                  const std::function<void(std::size_t)>& body) {
  parallel_for_workers(n, threads, progress, [&body](std::size_t k, std::size_t) { body(k); });
}

void parallel_for_workers(std::size_t n, int threads, const std::function<void(std::size_t, std::size_t)>& progress,
                          const std::function<void(std::size_t, std::size_t)>& body) {
  std::atomic<std::size_t> next{0}, done{0};
  std::exception_ptr failure;
  std::mutex mutex;
  std::condition_variable finished;
  const auto work = [&](std::size_t worker) {
    for (std::size_t k = next++; k < n; k = next++) {
      try {
        body(k, worker);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next = n;  // stop handing out work
      }
      if (++done == n) {
        const std::lock_guard lock(mutex);
        finished.notify_all();
      }
    }
  };
  const std::size_t count = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, threads)), n);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < count; ++t) pool.emplace_back(work, t);
  if (progress) {
    std::unique_lock lock(mutex);
    while (!failure && done < n) {
      finished.wait_for(lock, std::chrono::milliseconds(200));
      progress(done, n);
    }
    if (!failure && n > 0) progress(n, n);  // the last completion may land after the last call
  }
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

namespace {

// --search: every admitted plan's lower bound, then replays in ascending bound order until the
// bound exceeds the `keep`-th best step time found. The plans skipped that way cannot be among
// the `keep` fastest (their step time is at least their bound), so the ranking is exact.
// Replays run `threads` at a time, speculatively; a replay that the one-at-a-time order would
// have skipped is discarded, so the outcome is the same for any thread count.
void search(std::vector<PlanOutcome>& outcomes, std::vector<std::optional<Admitted>>& admitted,
            const SweepOptions& options) {
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < admitted.size(); ++k)
    if (admitted[k]) order.push_back(k);
  parallel_for(order.size(), options.threads, options.progress, [&](std::size_t i) {
    try {
      outcomes[order[i]].lower_bound_s = compute_lower_bound(*admitted[order[i]]);
    } catch (const InputError& e) {  // as a sweep of lists would report it: an invalid plan
      reject(outcomes[order[i]], e);
      admitted[order[i]].reset();
    }
  });
  std::erase_if(order, [&](std::size_t k) { return !admitted[k]; });
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const double bx = outcomes[x].lower_bound_s, by = outcomes[y].lower_bound_s;
    return bx != by ? bx < by : x < y;
  });
  const std::size_t keep = std::max<std::size_t>(options.keep, 1);
  std::vector<double> best;  // the `keep` fastest step times so far, ascending
  const auto kth_best = [&] { return best.size() < keep ? std::numeric_limits<double>::infinity() : best[keep - 1]; };
  const std::size_t wave = static_cast<std::size_t>(std::max(1, options.threads));
  std::vector<WorkerFabric> fabrics(wave);
  std::size_t at = 0;
  while (at < order.size() && outcomes[order[at]].lower_bound_s <= kth_best()) {
    const std::size_t end = std::min(order.size(), at + wave);
    std::vector<PlanOutcome> trial(end - at);
    std::vector<std::exception_ptr> failed(trial.size());
    for (std::size_t i = 0; i < trial.size(); ++i) trial[i] = outcomes[order[at + i]];
    // An error of a replay the one-at-a-time order would have skipped must not surface: each is
    // held with its plan and raised only when that plan is accepted below.
    parallel_for_workers(trial.size(), options.threads, {}, [&](std::size_t i, std::size_t worker) {
      try {
        simulate(*admitted[order[at + i]], trial[i], options.fast_forward, &fabrics[worker]);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    });
    for (std::size_t i = 0; i < trial.size() && outcomes[order[at]].lower_bound_s <= kth_best(); ++i, ++at) {
      if (failed[i]) std::rethrow_exception(failed[i]);
      outcomes[order[at]] = std::move(trial[i]);
      if (outcomes[order[at]].status != PlanStatus::Simulated) continue;
      best.insert(std::upper_bound(best.begin(), best.end(), outcomes[order[at]].step_time_s),
                  outcomes[order[at]].step_time_s);
    }
  }
  const double bar = kth_best();
  for (; at < order.size(); ++at) {
    PlanOutcome& o = outcomes[order[at]];
    o.status = PlanStatus::Pruned;
    o.detail = fmt::format("compute lower bound {:.6g} s exceeds {:.6g} s, the slowest of the {} fastest steps",
                           o.lower_bound_s, bar, keep);
  }
}

// --vary paths must be distinct, and neither they nor --set may name a plan field the sweep
// itself sets (a list axis, or any of them under --search): the swept value would silently
// replace the varied or set one.
void check_vary(const SweepAxes& axes, bool searching) {
  const std::vector<std::pair<std::string, bool>> plan_fields{
      {"parallelism.tp", !axes.tp.empty()},
      {"parallelism.pp", !axes.pp.empty()},
      {"parallelism.dp", true},  // set (given or derived) on every point
      {"training.micro_batch", !axes.micro_batch.empty()},
      {"parallelism.virtual_stages", !axes.virtual_stages.empty()},
      {"parallelism.schedule", !axes.virtual_stages.empty()},
      {"parallelism.recompute", !axes.recompute.empty()},
      {"parallelism.zero", !axes.zero.empty()},
      {"parallelism.sequence_parallel", !axes.sequence_parallel.empty()}};
  const auto refuse = [searching](const std::string& option) {
    throw InputError(fmt::format("{}: the sweep sets this plan field itself ({}); give its values as the plan option "
                                 "instead",
                                 option, searching ? "--search" : "a list option or the derived dp"));
  };
  for (std::size_t i = 0; i < axes.vary.size(); ++i) {
    const VaryAxis& v = axes.vary[i];
    if (v.values.empty()) throw InputError(fmt::format("--vary {}: expected at least one value", v.path));
    for (std::size_t j = 0; j < i; ++j)
      if (axes.vary[j].path == v.path) throw InputError(fmt::format("--vary {}: given twice", v.path));
    for (std::size_t a = 0; a < v.values.size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        if (v.values[a] == v.values[b])
          throw InputError(fmt::format("--vary {}: expected each value once, found {} listed twice", v.path, v.values[a]));
    for (const auto& [field, swept] : plan_fields)
      if (v.path == field && (swept || searching)) refuse("--vary " + v.path);
  }
  // --set: only the fields a point always takes from the sweep. The schedule is kept at one
  // virtual stage and sequence parallelism under --search without --sp: a --set of them counts.
  const std::vector<std::pair<std::string, bool>> set_by_sweep{
      {"parallelism.tp", !axes.tp.empty() || searching},
      {"parallelism.pp", !axes.pp.empty() || searching},
      {"parallelism.dp", true},
      {"training.micro_batch", !axes.micro_batch.empty() || searching},
      {"parallelism.virtual_stages", !axes.virtual_stages.empty() || searching},
      {"parallelism.recompute", !axes.recompute.empty() || searching},
      {"parallelism.zero", !axes.zero.empty() || searching},
      {"parallelism.sequence_parallel", !axes.sequence_parallel.empty()}};
  for (const std::string& o : axes.overrides) {
    const std::string path = o.substr(0, o.find('='));
    for (const auto& [field, swept] : set_by_sweep)
      if (path == field && swept) refuse("--set " + o);
  }
}

// 64-bit FNV-1a of the experiment document as JSON text: shards of one sweep read the same file.
std::string document_digest(const nlohmann::json& document) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : document.dump()) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

nlohmann::json definition(const nlohmann::json& document, const SweepAxes& a, const SweepSummary& s) {
  nlohmann::json vary = nlohmann::json::array();
  for (const VaryAxis& v : a.vary) vary.push_back({{"path", v.path}, {"values", v.values}});
  std::vector<std::string> recompute, sp;
  for (workload::Recompute r : a.recompute) recompute.push_back(workload::recompute_text(r));
  for (bool b : a.sequence_parallel) sp.emplace_back(b ? "on" : "off");
  return {{"experiment_digest", document_digest(document)},
          {"tp", a.tp},
          {"pp", a.pp},
          {"dp", a.dp},
          {"micro_batch", a.micro_batch},
          {"virtual_stages", a.virtual_stages},
          {"recompute", recompute},
          {"zero", a.zero},
          {"sequence_parallel", sp},
          {"vary", vary},
          {"set", a.overrides},
          {"search", s.search},
          {"keep", s.keep}};
}

// The bounds of runs of consecutive points whose layout(k) is equal, each at most
// max(1, n / (2 threads)) points long: [b[i], b[i + 1]) is run i; b.front() = 0, b.back() = n.
template <class Layout>
std::vector<std::size_t> layout_runs(std::size_t n, int threads, const Layout& layout) {
  const std::size_t cap = std::max<std::size_t>(1, n / (2 * static_cast<std::size_t>(std::max(1, threads))));
  std::vector<std::size_t> bounds{0};
  for (std::size_t k = 1; k < n; ++k)
    if (k - bounds.back() >= cap || layout(k) != layout(k - 1)) bounds.push_back(k);
  if (n > 0) bounds.push_back(n);
  return bounds;
}

}  // namespace

std::string sweep_title(const config::Experiment& ex) {
  const hw::ClusterSpec& c = ex.cluster;
  return fmt::format("{} on {} x {} ({} ranks), {} network", ex.model.name, c.instances, c.instance.name, c.ranks(),
                     net::to_string(ex.network.model));
}

PlanOutcome evaluate_plan(const config::Experiment& ex, const PlanPoint& point, bool fast_forward) {
  return evaluate(ex, point, 0, fast_forward, nullptr);
}

std::optional<PlanSize> point_step_size(const config::Experiment& ex, const PlanPoint& point) {
  PlanOutcome o;
  const std::optional<Admitted> a = admit(point, ex, o);
  if (!a) return std::nullopt;
  return step_size_of(*a, o);
}

SweepMemory sweep_memory(std::size_t n, int threads, bool search, const std::function<std::optional<PlanSize>(std::size_t)>& size_of) {
  std::vector<std::optional<PlanSize>> sizes(n);
  parallel_for(n, threads, {}, [&](std::size_t k) { sizes[k] = size_of(k); });
  SweepMemory m;
  std::size_t simulated = 0;
  for (const std::optional<PlanSize>& size : sizes) {
    if (!size) continue;
    ++simulated;
    if (size->bytes > m.largest_plan_bytes) {  // ties: the first in enumeration order
      m.largest_plan_bytes = size->bytes;
      m.largest_plan_tasks = size->tasks;
      m.largest_plan = size->plan;
    }
  }
  m.at_once = std::min<std::size_t>(simulated, static_cast<std::size_t>(std::max(1, threads)));
  m.held_bytes = static_cast<double>(n) * held_bytes_per_point(search);
  return m;
}

double held_bytes_per_point(bool search) {
  // An outcome's texts (reason, detail, finding, vary values) rarely pass a few hundred bytes; an
  // admitted plan holds the cluster, model and software presets with their names and sources.
  constexpr double kOutcomeText = 1024, kAdmittedText = 4096;
  const double outcome = static_cast<double>(sizeof(PlanOutcome)) + kOutcomeText;
  return search ? outcome + static_cast<double>(sizeof(std::optional<Admitted>)) + kAdmittedText : outcome;
}

void check_sweep_memory(const SweepMemory& m, double max_bytes, const std::string& what) {
  if (max_bytes <= 0 || m.total() <= max_bytes) return;
  const auto gb = [](double b) { return fmt::format("{:.3g} GB", b / 1e9); };
  throw InputError(fmt::format("{} would need about {} of memory: its largest plan ({}) about {} to simulate (about "
                               "{:.3g} tasks) x {} simulated at once (--threads), and {} kept for the whole run; more "
                               "than the limit of {} (--max-memory; default: the memory available now); --force runs it "
                               "anyway",
                               what, gb(m.total()), m.largest_plan, gb(m.largest_plan_bytes), m.largest_plan_tasks,
                               m.at_once, gb(m.held_bytes), gb(max_bytes)),
                   "the sweep needs more memory than the limit");
}

SweepResult run_sweep(const nlohmann::json& document, const std::string& file, const SweepAxes& axes,
                      const SweepOptions& options) {
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards)
    throw InputError(fmt::format("--shard: expected I/N with 0 <= I < N, found {}/{}", options.shard, options.shards));
  if (options.search && options.shards > 1)
    throw InputError("--search prunes against the best plans of the whole search, so it does not split into "
                     "--shard slices: run it whole, or shard a sweep of lists");
  check_vary(axes, options.search);
  const std::vector<Combination> combos = combinations(document, file, axes.vary, axes.overrides);
  // Every point of every combination, in enumeration order: (combination, its point).
  std::vector<std::vector<PlanPoint>> points;
  std::vector<std::pair<std::size_t, std::size_t>> flat;
  for (std::size_t c = 0; c < combos.size(); ++c) {
    points.push_back(options.search ? search_points(combos[c].experiment, axes)
                                    : plan_points(combos[c].experiment, axes));
    for (std::size_t j = 0; j < points.back().size(); ++j) flat.emplace_back(c, j);
  }

  SweepResult result;
  result.summary.experiment = file;
  result.summary.title = sweep_title(combos.front().experiment);
  for (const VaryAxis& v : axes.vary) result.summary.vary_paths.push_back(v.path);
  result.summary.points = flat.size();
  result.summary.shard = options.shard;
  result.summary.shards = options.shards;
  result.summary.search = options.search;
  result.summary.keep = options.search ? std::max<std::size_t>(options.keep, 1) : 0;
  result.summary.definition = definition(document, axes, result.summary);

  // This shard's points: every shards-th index from `shard`, so each slice mixes cheap and
  // costly plans alike (neighbours in the product differ in the innermost axes only).
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(options.shard); i < flat.size();
       i += static_cast<std::size_t>(options.shards))
    mine.push_back(i);
  result.outcomes.resize(mine.size());
  const auto point = [&](std::size_t k) -> const PlanPoint& { return points[flat[mine[k]].first][flat[mine[k]].second]; };
  const auto combo = [&](std::size_t k) -> const Combination& { return combos[flat[mine[k]].first]; };

  const std::string what = fmt::format("the sweep of {} ({} points)", file, mine.size());
  if (!options.search) {
    if (options.max_memory_bytes > 0)
      check_sweep_memory(sweep_memory(mine.size(), options.threads, false,
                                      [&](std::size_t k) { return point_step_size(combo(k).experiment, point(k)); }),
                         options.max_memory_bytes, what);
    std::vector<WorkerFabric> fabrics(static_cast<std::size_t>(std::max(1, options.threads)));
    // A worker takes a run of neighbouring points with the same rank layout, so that they share its
    // fabric's group terms (net/fabric.hpp); runs are capped so that every thread still gets work.
    const std::vector<std::size_t> runs = layout_runs(
        mine.size(), options.threads, [&](std::size_t k) { return std::tuple{flat[mine[k]].first, point(k).parallelism.tp,
                                                                             point(k).parallelism.pp, point(k).dp}; });
    std::atomic<std::size_t> done{0};
    std::function<void(std::size_t, std::size_t)> progress;
    if (options.progress) progress = [&](std::size_t, std::size_t) { options.progress(done.load(), mine.size()); };
    parallel_for_workers(runs.size() - 1, options.threads, progress, [&](std::size_t run, std::size_t worker) {
      for (std::size_t k = runs[run]; k < runs[run + 1]; ++k) {
        PlanOutcome& o = result.outcomes[k];
        o = evaluate(combo(k).experiment, point(k), flat[mine[k]].first, options.fast_forward, &fabrics[worker]);
        o.index = mine[k];
        o.vary = combo(k).values;
        ++done;
      }
    });
    return result;
  }
  std::vector<std::optional<Admitted>> admitted(mine.size());
  parallel_for(mine.size(), options.threads, {}, [&](std::size_t k) {
    result.outcomes[k].index = mine[k];
    result.outcomes[k].vary = combo(k).values;
    admitted[k] = admit(point(k), combo(k).experiment, result.outcomes[k]);
    if (admitted[k]) admitted[k]->combination = flat[mine[k]].first;
  });
  if (options.max_memory_bytes > 0)
    check_sweep_memory(sweep_memory(mine.size(), options.threads, true,
                                    [&](std::size_t k) {
                                      return admitted[k] ? step_size_of(*admitted[k], result.outcomes[k]) : std::nullopt;
                                    }),
                       options.max_memory_bytes, what);
  search(result.outcomes, admitted, options);
  return result;
}

}  // namespace trnsim::explore
