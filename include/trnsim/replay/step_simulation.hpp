#pragma once
// simulate_step: the whole pipeline for one optimizer step. Resolves the plan (plan_rule.hpp: the
// software's defaults, else the plainest plan that fits), builds the StepGraph (workload), prices
// every Work on the chip (cost), runs the graph on the engine with the network (net, replay) and
// estimates memory. The report layer turns the result into figures.
#include <memory>
#include <string>
#include <vector>

#include "trnsim/cost/compute_model.hpp"
#include "trnsim/hw/specs.hpp"
#include "trnsim/net/fabric.hpp"
#include "trnsim/net/network.hpp"
#include "trnsim/replay/timeline.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/software.hpp"
#include "trnsim/workload/specs.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::replay {

struct StepInput {
  hw::ClusterSpec cluster;
  workload::ModelSpec model;
  workload::TrainingSpec training;
  workload::ParallelismSpec parallelism;
  workload::SoftwareSpec software;
  net::NetworkModelKind network = net::NetworkModelKind::Analytic;
  // Auto: the software's collective library chooses (software.collectives); Optimal: the
  // analytic optimum; else forced on every collective.
  net::Algorithm algorithm = net::Algorithm::Auto;
  bool symmetric = true;  // simulate one rank per pipeline stage (BuildOptions::symmetric)
  // Start a collective's (or transfer's) identical replicas as one network call where the model
  // allows (analytic: one event); off: one call per group, as a reference (same step time).
  bool collapse_replicas = true;
  // Refuse (InputError with the estimate) a step whose simulation would need more memory than
  // this, in bytes (replay/step_size.hpp); 0: no limit. The CLI sets the machine's available
  // memory, or --max-memory, unless --force.
  double max_memory_bytes = 0;
};

struct StepRun {
  workload::ResolvedPlan resolved;            // the plan with every unset field chosen, and why
  workload::Plan plan;
  workload::StepGraph graph;
  std::vector<cost::TaskCost> work_costs;     // per StepGraph::works entry, on one rank
  std::vector<double> work_seconds;           // what the replay takes per work: cost, or a trace's time
  double comm_compute_slowdown = 1;           // hw::Calibration::comm_compute_slowdown of the chip
  Timeline timeline;
  workload::MemoryEstimate memory;
  double rank_memory_capacity = 0;            // bytes of HBM one rank may use
  std::vector<net::LinkUsage> links;          // links that carried traffic
  std::shared_ptr<const net::Fabric> fabric;  // the fabric replayed on: its links' ends and bandwidths
  // Micro-batches [lo, hi) replay_step sets aside when lo < hi (ExecutorOptions::aside_lo, the
  // fast-forward's derived replay, fast_forward.hpp); where timeline.set_aside, the links that
  // carried traffic from the calls of the other micro-batches, and their figures alone.
  struct Aside {
    std::int64_t lo = 0, hi = 0;
    std::vector<net::LinkUsage> links_without;
  } aside;
  int ranks = 0;                              // real ranks of the cluster
  int physical_cores_per_rank = 1;
  double build_seconds = 0, simulate_seconds = 0;  // wall time of graph build and replay
  // A replayed trace (trace_replay.hpp): where it came from; empty file for a model run.
  struct TraceOrigin {
    std::string file, format, cluster_instance;  // cluster: where it was recorded ("" unknown)
    std::size_t nodes = 0;            // tasks replayed
    std::size_t measured_tasks = 0;   // compute tasks that kept a measured time
    double duration_scale = 1;        // --scale-durations compute=
    std::vector<std::string> ignored; // nodes the reader skipped, with the reason
  } trace;
};

// Contract: throws InputError for a plan that does not fit the model, batch or cluster (naming
// the field), for a step too large to simulate within input.max_memory_bytes, and for a step
// longer than the simulated clock holds (replay/step_size.hpp), each with its estimate. Unset fields are chosen by resolve_plan (plan_rule.hpp). Deterministic: the same
// input gives the same StepRun (wall-clock seconds aside).
StepRun simulate_step(const StepInput& input);

// The two halves of simulate_step for a plan already resolved (every optional set):
// prepare_step builds the graph, prices its works and estimates memory (no replay, `timeline`
// empty); replay_step runs it on the engine with input.network and fills timeline and links.
// `fabric`, when given, must be input.cluster's (net/fabric.hpp): plans on one cluster then share
// its topology and routes; the figures are the same with or without it. `replicas` false builds
// without the replicas' lists (workload::BuildOptions::replicas): a graph to price, not to replay.
StepRun prepare_step(const StepInput& input, workload::ResolvedPlan resolved, bool replicas = true);
void replay_step(const StepInput& input, StepRun& run, std::shared_ptr<net::Fabric> fabric = {});
// Fills run.work_costs and run.work_seconds (a work's measured time where it has one, else its
// cost on input.cluster's chip at run.resolved.training's dtype) and comm_compute_slowdown.
void price_works(const StepInput& input, StepRun& run);

// HBM one rank of `cluster` may use (bytes): the chip's HBM over its ranks (a GPU, or a logical
// NeuronCore of logical_core_size physical cores).
int physical_cores_per_rank(const hw::ChipSpec& chip);
double rank_memory_capacity(const hw::ClusterSpec& cluster);

}  // namespace trnsim::replay
