// Replaying a trace (contract in trace_replay.hpp).
#include "trnsim/replay/trace_replay.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/hw/device_map.hpp"
#include "trnsim/replay/executor.hpp"
#include "trnsim/workload/memory.hpp"

namespace trnsim::replay {

DurationScale parse_duration_scale(const std::string& text) {
  const std::string prefix = "compute=";
  DurationScale s;
  const char* begin = text.data() + prefix.size();
  const char* end = text.data() + text.size();
  const bool ok = text.rfind(prefix, 0) == 0 && begin != end &&
                  std::from_chars(begin, end, s.compute).ptr == end && std::isfinite(s.compute) && s.compute > 0;
  if (!ok)
    throw InputError(fmt::format("--scale-durations: expected compute=F with F a number > 0 (e.g. compute=0.5), found \"{}\"", text));
  return s;
}

StepRun prepare_trace(const StepInput& input, trace::Trace trace, const DurationScale& scale) {
  const auto t_build = std::chrono::steady_clock::now();
  StepRun run;
  const hw::DeviceMap devices(input.cluster);
  run.ranks = devices.ranks();
  run.physical_cores_per_rank = physical_cores_per_rank(input.cluster.instance.chip);
  if (trace.graph.total_ranks > run.ranks)
    throw InputError(fmt::format("{}: the trace has {} ranks, the cluster ({} x {}) {}", trace.file, trace.graph.total_ranks,
                                 input.cluster.instances, input.cluster.instance.name, run.ranks));
  run.resolved.training = input.training;
  run.resolved.parallelism = input.parallelism;
  if (input.model.layers > 0) {
    // An exported trace names the resolved plan it was built from: the report's MFU and memory
    // follow from it, as for the model run.
    try {
      run.plan = workload::make_plan(input.model, input.training, input.parallelism, trace.graph.total_ranks);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: /source: {}", trace.file, e.what()));
    }
    run.memory = workload::estimate_memory(input.model, input.training, input.parallelism, input.software);
  } else {
    run.resolved.training.precision = trace.dtype;
    std::int32_t stages = 1;
    for (const auto& t : trace.graph.tasks) stages = std::max(stages, t.stage + 1);
    run.plan.pp = stages;
    run.plan.dp = trace.graph.total_ranks / stages;
  }
  run.rank_memory_capacity = rank_memory_capacity(input.cluster);
  if (scale.compute != 1)
    for (workload::Work& w : trace.graph.works)
      if (w.measured_s >= 0) w.measured_s *= scale.compute;
  run.trace = {trace.file, trace.format, trace.cluster_instance, trace.graph.tasks.size(), trace.measured_tasks,
               scale.compute, std::move(trace.ignored)};
  run.graph = std::move(trace.graph);
  price_works(input, run);
  run.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_build).count();
  return run;
}

StepRun simulate_trace(const StepInput& input, trace::Trace trace, const DurationScale& scale) {
  const std::vector<trace::Trace::NodeRef> nodes = std::move(trace.task_nodes);
  StepRun run = prepare_trace(input, std::move(trace), scale);
  try {
    replay_step(input, run);
  } catch (const StuckError& e) {
    // The trace's own order deadlocks (build_trace's checks pass: no cycle through dependencies
    // and calls): its ranks reach their collectives on one stream in an order that waits on itself.
    if (e.task() >= nodes.size()) throw;
    const auto node = [&](workload::TaskId t) { return fmt::format("rank {} node {}", nodes[t].rank, nodes[t].id); };
    const StuckError::Blocker& b = e.blocker();
    std::string blocker;
    if (b.holder < nodes.size() && b.missing < nodes.size()) {
      const std::string why = b.missing_behind < nodes.size()
                                  ? fmt::format("queued behind {} on its stream", node(b.missing_behind))
                                  : fmt::format("waiting for {} of its dependencies", b.missing_deps);
      blocker = fmt::format(": {} holds its stream, waiting for its call's member {}, {}", node(b.holder),
                            node(b.missing), why);
    }
    throw InputError(fmt::format("{}: {}: never runs in the replay ({} of {} tasks wait forever): a collective "
                                 "holds its rank's stream while a node queued behind it is one its call waits for{} "
                                 "(give each collective the dependencies that order it after the rank's earlier calls)",
                                 run.trace.file, node(e.task()), e.waiting(), run.graph.tasks.size(), blocker));
  }
  return run;
}

}  // namespace trnsim::replay
