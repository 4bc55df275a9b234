// trnsim sweep's runner: one parse per --vary combination, then each point of this shard checked,
// sized and simulated on a pool of threads (contracts in explore/sweep.hpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/core.h>

#include "trnsim/config/step_input.hpp"
#include "trnsim/enum_names.hpp"
#include "trnsim/error.hpp"
#include "trnsim/explore/sweep.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/step_report.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::explore {

std::string_view status_name(PlanStatus s) {
  switch (s) {
    case PlanStatus::Simulated: return "simulated";
    case PlanStatus::OutOfMemory: return "out_of_memory";
    case PlanStatus::Invalid: return "invalid";
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
  if (p.recompute) o.recompute = std::string(to_string(*p.recompute));
  o.sequence_parallel = p.sequence_parallel;
}

void reject(PlanOutcome& o, const InputError& e) {
  o.status = PlanStatus::Invalid;
  o.detail = e.what();
  o.reason = e.reason().empty() ? o.detail : e.reason();
}

PlanOutcome evaluate(const PlanPoint& point, const Combination& combo, std::size_t index) {
  PlanOutcome o;
  o.index = index;
  o.vary = combo.values;
  const config::Experiment& ex = combo.experiment;
  replay::StepInput in = config::step_input(ex);
  in.training = point.training;
  in.parallelism = point.parallelism;
  record_plan(o, in.training, in.parallelism);
  o.dp = point.dp;
  const std::int64_t ranks = in.cluster.ranks();
  const std::int64_t tp_pp = in.parallelism.tp * in.parallelism.pp;
  if (point.dp) {
    in.parallelism.dp = *point.dp;
  } else if (tp_pp < 1 || ranks % tp_pp != 0) {
    reject(o, InputError(fmt::format("/parallelism: tp x pp = {} does not divide the cluster's {} ranks", tp_pp, ranks),
                         "tp x pp does not divide the cluster's ranks"));
    return o;
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
      return o;
    }
    replay::StepRun run = replay::prepare_step(in, std::move(resolved));
    replay::replay_step(in, run);
    const report::StepReport rep = report::analyze(in, run);
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
  return o;
}

std::string title(const config::Experiment& ex) {
  const hw::ClusterSpec& c = ex.cluster;
  return fmt::format("{} on {} x {} ({} ranks), {} network", ex.model.name, c.instances, c.instance.name, c.ranks(),
                     net::to_string(ex.network.model));
}

}  // namespace

SweepResult run_sweep(const nlohmann::json& document, const std::string& file, const SweepAxes& axes,
                      const SweepOptions& options) {
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards)
    throw InputError(fmt::format("--shard: expected I/N with 0 <= I < N, found {}/{}", options.shard, options.shards));
  for (const VaryAxis& v : axes.vary)
    if (v.values.empty()) throw InputError(fmt::format("--vary {}: expected at least one value", v.path));
  const std::vector<Combination> combos = combinations(document, file, axes.vary, axes.overrides);
  const std::size_t per_combo = plans_per_combination(axes);
  std::vector<std::vector<PlanPoint>> points;
  for (const Combination& c : combos) points.push_back(plan_points(c.experiment, axes));

  SweepResult result;
  result.summary.experiment = file;
  result.summary.title = title(combos.front().experiment);
  for (const VaryAxis& v : axes.vary) result.summary.vary_paths.push_back(v.path);
  result.summary.points = combos.size() * per_combo;
  result.summary.shard = options.shard;
  result.summary.shards = options.shards;

  // This shard's points: every shards-th index from `shard`, so each slice mixes cheap and
  // costly plans alike (neighbours in the product differ in the innermost axes only).
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(options.shard); i < result.summary.points;
       i += static_cast<std::size_t>(options.shards))
    mine.push_back(i);
  result.outcomes.resize(mine.size());

  std::atomic<std::size_t> next{0}, done{0};
  std::exception_ptr failure;
  std::mutex mutex;
  std::condition_variable finished;
  const auto work = [&] {
    for (std::size_t k = next++; k < mine.size(); k = next++) {
      try {
        const std::size_t i = mine[k];
        result.outcomes[k] = evaluate(points[i / per_combo][i % per_combo], combos[i / per_combo], i);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next = mine.size();  // stop handing out points
      }
      if (++done == mine.size()) {
        const std::lock_guard lock(mutex);
        finished.notify_all();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, options.threads)), mine.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  if (options.progress) {
    std::unique_lock lock(mutex);
    while (!failure && done < mine.size()) {
      finished.wait_for(lock, std::chrono::milliseconds(200));
      options.progress(done, mine.size());
    }
  }
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace trnsim::explore
