#pragma once
// build_step: one optimizer step of a transformer under TP/SP, PP, DP and ZeRO-1 as a StepGraph.
//
// Tasks of one micro-batch on one model chunk (see layer_steps for the kernels): each layer's
// forward is cut at its tensor-parallel collectives, i.e.
//   [norm1] AG [qkv, rotary, attention, out] RS [residual, norm2] AG [fc1, act, fc2] RS   (SP)
//   [residual, norm1, qkv, rotary, attention, out] AR [residual, norm2, fc1, act, fc2] AR (no SP)
// and at every layer boundary (no compute task holds kernels of two layers, or of a layer and the
// embedding or head); the backward mirrors it, preceded by the recomputation (selective: the attention core as
// its own Recompute task; selective-op: TorchTitan's per-operator policy, the kernels
// layer_steps.cpp lists and the attention rebuild; full: the layer's forward again, collectives
// included; full-every-n: full on every n-th layer of the rank, none on the others). Identical layers
// share one Work. The first virtual stage starts with the embedding, the last ends with final
// norm, LM head and loss. See step_graph.hpp for the dependency conventions.
//
// DP: gradients are bucketed in the order the last micro-batch's backward produces them; a bucket
// (gradient_bucket_bytes) launches when its last gradient is ready: all-reduce, or under ZeRO-1
// reduce-scatter, then the optimizer on the shard and all-gathers of the updated parameters in
// the same buckets. Tied embeddings on separate first and last stages are all-reduced between them.
//
// CP (context parallelism, Plan::cp): every task works on the rank's s / cp tokens; each layer's
// attention core runs as cp blocks with the K/V exchanges of src/workload/context_steps.hpp
// between them (Category::CpComm, on the TP stream); gradients go over the dp x cp ranks.
#include <cstdint>

#include "trnsim/workload/software.hpp"
#include "trnsim/workload/specs.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

struct BuildOptions {
  // Simulate one rank per pipeline stage (TP rank 0 of DP replica 0); every other TP group, DP
  // group and pipeline transfer is listed as a replica so the network carries all traffic.
  // false: every rank has its own tasks (same shape per rank).
  bool symmetric = true;
  // A symmetric build's replicas listed (group sets, pipeline pairs): false lists the simulated
  // ranks' own groups and pairs only, for a graph that is priced and never replayed (at 65,536
  // chips the lists are most of a build).
  bool replicas = true;
  std::int64_t total_ranks = 0;         // ranks of the cluster; 0: tp * pp * dp, not checked
  std::int64_t ranks_per_instance = 0;  // for the finding "TP group spans instances"; 0: skip
};

// Contract: every optional of `training` and `parallelism` resolved (replay::resolve_plan), else
// InputError naming the field; a plan that does not fit the model, batch or ranks is an
// InputError naming the field. Deterministic. O(simulated ranks * micro-batches * layers / pp).
StepGraph build_step(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& parallelism,
                     const SoftwareSpec& software, const BuildOptions& options = {});

}  // namespace trnsim::workload
