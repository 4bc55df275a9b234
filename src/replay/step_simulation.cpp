#include "trnsim/replay/step_simulation.hpp"

#include <array>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "trnsim/hw/device_map.hpp"
#include "trnsim/replay/executor.hpp"
#include "trnsim/replay/net_communicator.hpp"
#include "trnsim/error.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/replay/step_size.hpp"
#include "trnsim/workload/build_step.hpp"

namespace trnsim::replay {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int physical_cores_per_rank(const hw::ChipSpec& chip) {
  return chip.family == hw::Family::Gpu ? 1 : chip.logical_core_size;
}

double rank_memory_capacity(const hw::ClusterSpec& cluster) {
  const hw::ChipSpec& chip = cluster.instance.chip;
  return workload::rank_memory_capacity(chip, physical_cores_per_rank(chip));
}

StepRun prepare_step(const StepInput& input, workload::ResolvedPlan resolved, bool replicas) {
  StepRun run;
  const hw::DeviceMap devices(input.cluster);
  run.ranks = devices.ranks();
  run.physical_cores_per_rank = physical_cores_per_rank(input.cluster.instance.chip);

  const auto t_build = std::chrono::steady_clock::now();
  run.resolved = std::move(resolved);
  run.plan = workload::make_plan(input.model, run.resolved.training, run.resolved.parallelism, run.ranks);
  check_step_size(estimate_step_size(input.cluster, input.model, run.plan, input.symmetric), input.max_memory_bytes);
  workload::BuildOptions options;
  options.symmetric = input.symmetric;
  options.replicas = replicas;
  options.total_ranks = run.ranks;
  options.ranks_per_instance = devices.ranks_per_instance();
  run.graph = workload::build_step(input.model, run.resolved.training, run.resolved.parallelism, input.software, options);
  run.memory = workload::estimate_memory(input.model, run.resolved.training, run.resolved.parallelism, input.software);
  run.rank_memory_capacity = rank_memory_capacity(input.cluster);

  price_works(input, run);
  run.build_seconds = seconds_since(t_build);
  return run;
}

void price_works(const StepInput& input, StepRun& run) {
  const cost::ComputeModel compute(input.cluster.instance.chip, input.cluster.instance.calibration,
                                   workload::matmul_dtype(run.resolved.training.precision, input.software.precision_for(run.resolved.training.precision)),
                                   run.physical_cores_per_rank);
  run.work_seconds.reserve(run.graph.works.size());
  run.work_costs.reserve(run.graph.works.size());
  for (const workload::Work& work : run.graph.works) {
    run.work_costs.push_back(compute.cost(work.kernels));
    run.work_seconds.push_back(work.measured_s >= 0 ? work.measured_s : run.work_costs.back().seconds);
  }
  check_step_seconds(estimate_step_seconds(run.graph, run.work_seconds, input.cluster));
  run.comm_compute_slowdown = compute.comm_compute_slowdown();
}

void replay_step(const StepInput& input, StepRun& run, std::shared_ptr<net::Fabric> fabric) {
  const auto t_sim = std::chrono::steady_clock::now();
  sim::Engine engine;
  if (!fabric) fabric = std::make_shared<net::Fabric>(input.cluster);
  run.fabric = fabric;
  net::Network network(std::move(fabric), input.network, engine, input.software.collectives);
  NetCommunicator comm(network, input.algorithm, input.collapse_replicas);
  ExecutorOptions exec;
  exec.comm_compute_slowdown = run.comm_compute_slowdown;
  exec.aside_lo = run.aside.lo;
  exec.aside_hi = run.aside.hi;
  // GPUs: NCCL's use of SMs and HBM is in comm_compute_slowdown; Trainium: shared HBM only.
  const hw::ChipSpec& chip = input.cluster.instance.chip;
  const cost::ComputeModel compute(chip, input.cluster.instance.calibration,
                                   workload::matmul_dtype(run.resolved.training.precision, input.software.precision_for(run.resolved.training.precision)),
                                   run.physical_cores_per_rank);
  // Per work, the last two shares it was priced at and their durations: the executor reprices a
  // running task at each change of its rank's network activity, and in a pipeline's steady state
  // the same works meet the same few shares micro-batch after micro-batch (pricing them anew was
  // 3 % of a sweep's plan of llama3.1-405b-trn2u). The cost is a function of (work, share): the
  // same durations, to the bit.
  struct Priced {
    std::array<double, 2> share{-1, -1}, seconds{};
    std::uint8_t next = 0;  // the entry to replace
  };
  std::vector<Priced> priced;
  if (chip.family != hw::Family::Gpu) {
    priced.resize(run.graph.works.size());
    exec.hbm_sharing.rank_hbm_bytes_per_s = compute.hbm_bytes_per_s();
    exec.hbm_sharing.task_seconds = [&compute, &run, &priced](std::uint32_t work, double share) {
      Priced& p = priced[work];
      for (std::size_t i = 0; i < 2; ++i) {
        if (p.share[i] == share) return p.seconds[i];
      }
      const double seconds = compute.cost(run.graph.works[work].kernels, share).seconds;
      p.share[p.next] = share;
      p.seconds[p.next] = seconds;
      p.next ^= 1;
      return seconds;
    };
  }
  try {
    run.timeline = execute(engine, run.graph, run.work_seconds, comm, exec);
  } catch (const std::overflow_error&) {
    // sim::Time ran out (about 106 days of picoseconds) although the lower bound checked in
    // prepare_step did not: the inputs make the step absurdly long all the same.
    throw InputError(fmt::format("the step lasts longer than trnsim's clock holds (about 106 days of simulated "
                                 "time; lower bound {:.3g} s): check the hardware figures and the plan for a value "
                                 "off by orders of magnitude",
                                 estimate_step_seconds(run.graph, run.work_seconds, input.cluster)),
                     "the step is longer than the simulated clock holds");
  }
  run.links = network.link_usage();
  run.aside.links_without.clear();
  if (run.timeline.set_aside) run.aside.links_without = network.link_usage(true);
  run.simulate_seconds = seconds_since(t_sim);
}

StepRun simulate_step(const StepInput& input) {
  StepRun run = prepare_step(input, resolve_plan(input));
  replay_step(input, run);
  return run;
}

}  // namespace trnsim::replay
