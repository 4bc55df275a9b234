#pragma once
// simulate_step: the whole pipeline for one optimizer step. Resolves the plan, builds the
// StepGraph (workload), prices every Work on the chip (cost), runs the graph on the engine with
// the network (net, replay) and estimates memory. The report layer turns the result into figures.
#include <string>
#include <vector>

#include "trnsim/cost/compute_model.hpp"
#include "trnsim/hw/specs.hpp"
#include "trnsim/net/network.hpp"
#include "trnsim/replay/timeline.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/specs.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::replay {

struct StepInput {
  hw::ClusterSpec cluster;
  workload::ModelSpec model;
  workload::TrainingSpec training;
  workload::ParallelismSpec parallelism;
  net::NetworkModel network = net::NetworkModel::Analytic;
  net::Algorithm algorithm = net::Algorithm::Auto;
  bool symmetric = true;  // simulate one rank per pipeline stage (BuildOptions::symmetric)
};

struct StepRun {
  workload::ResolvedPlan resolved;            // the plan with every unset field chosen, and why
  workload::Plan plan;
  workload::StepGraph graph;
  std::vector<cost::TaskCost> work_costs;     // per StepGraph::works entry, on one rank
  Timeline timeline;
  workload::MemoryEstimate memory;
  double rank_memory_capacity = 0;            // bytes of HBM one rank may use
  std::vector<net::LinkUsage> links;          // links that carried traffic
  int ranks = 0;                              // real ranks of the cluster
  int physical_cores_per_rank = 1;
  double build_seconds = 0, simulate_seconds = 0;  // wall time of graph build and replay
};

// Contract: throws InputError for a plan that does not fit the model, batch or cluster (naming
// the field). Deterministic: the same input gives the same StepRun.
StepRun simulate_step(const StepInput& input);

}  // namespace trnsim::replay
