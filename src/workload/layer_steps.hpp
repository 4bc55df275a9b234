#pragma once
// The kernels and tensor-parallel collectives of one layer, the embedding and the head, as a flat
// list of steps. build_step concatenates the steps of a model chunk and cuts them into tasks at
// every collective and category change, so a layer is a list of steps, not a fixed struct (MoE
// layers and context parallelism add their own steps).
#include <cstdint>
#include <vector>

#include "trnsim/cost/kernel.hpp"
#include "trnsim/workload/model_math.hpp"
#include "trnsim/workload/software.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

struct Step {
  // Cut: a task boundary where a tensor-parallel collective stands when tp > 1, kept at tp = 1
  // so that tasks have the same granularity (and layer attribution) with and without TP.
  // EpCollective: an all-to-all on the expert-parallel group (a Cut at ep = 1).
  // CpCollective: a K/V exchange on the context-parallel group (context_steps.hpp): send-recv to
  // the ring neighbour, or an all-gather / reduce-scatter over the CP group.
  enum class Kind : std::uint8_t { Kernel, TpCollective, Cut, EpCollective, CpCollective };
  Kind kind = Kind::Kernel;
  Category category = Category::Forward;
  std::int32_t layer = -1;
  cost::Kernel kernel;                          // Kind::Kernel
  CollectiveOp op = CollectiveOp::AllReduce;    // Kind::TpCollective (EpCollective, CpCollective): TP (EP, CP) group
  double bytes = 0;                             //   per-rank buffer (nccl-tests convention)
  // Kind::TpCollective (CpCollective): runs alongside the compute that follows it up to the next
  // Cut; what comes after that Cut waits for both (the software's TP overlap, Overlap::tp_comm;
  // ring attention's next block).
  bool overlapped = false;
};
using Steps = std::vector<Step>;

// Everything the step builders need about one micro-batch on one TP rank.
struct StepContext {
  LayerDims d;
  std::int64_t micro_batch = 1;  // sequences (b)
  std::int64_t seq_len = 0;      // s: the rank's tokens of a sequence (the sequence / cp)
  // Context parallelism: ranks the sequence is split over, and how they exchange K/V.
  std::int64_t cp = 1;
  CpAttention cp_attention = CpAttention::Ring;
  double act_bytes = 2;          // activation element size
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  hw::AttentionKernel attention = hw::AttentionKernel::Flash;
  bool learned_positions = false;
  // The software's precision recipe and kernels (workload/software.hpp).
  PrecisionRecipe precision;
  Kernels kernels;
  bool overlap_tp_comm = false;  // Overlap::tp_comm
  // Micro-batches per step: with more than one, every layer's gradients are added into the
  // accumulation buffer after each micro-batch's backward.
  std::int64_t micro_batches = 1;
  std::int64_t positions = 0;     // learned position table rows (embedding parameters)
  double head_parameters = 0;     // final norm and LM head weights of this rank
  // Mixture of experts: the simulated rank's routed load over the mean (moe_steps.hpp), and the
  // factor on the all-to-all buffers (capacity padding).
  double expert_load = 1;
  double dispatch_factor = 1;
  // The share of a layer's gradients the rank accumulates: 1 / dp under ZeRO-2 and FSDP (the
  // reduce-scattered shard), else 1; its routed experts' share, 1 / (dp / ep) (their own
  // data-parallel group), else 1.
  double gradient_shard = 1;
  double expert_gradient_shard = 1;
  std::int64_t tokens() const { return micro_batch * seq_len; }
};

// Forward of one layer; `category` is Forward, or Recompute for full recomputation.
void layer_forward(const StepContext& c, std::int32_t layer, Category category, Steps& out);
// Backward of one layer, preceded by its recomputation under the context's recompute mode.
void layer_backward(const StepContext& c, std::int32_t layer, Steps& out);
void embedding_forward(const StepContext& c, Steps& out);
void embedding_backward(const StepContext& c, Steps& out);
// Final norm, LM head (vocabulary-parallel) and cross-entropy loss; backward mirrors it.
void head_forward(const StepContext& c, Steps& out);
void head_backward(const StepContext& c, Steps& out);
// The optimizer update of `parameters` (one rank's shard): memory-bound.
cost::Kernel optimizer_kernel(const PrecisionRecipe& precision, Optimizer optimizer, double parameters);
// The gradient-norm pass of gradient clipping over `parameters` (one rank's shard): every
// accumulated gradient read once, squared and summed.
cost::Kernel gradient_norm_kernel(const PrecisionRecipe& precision, double parameters);

}  // namespace trnsim::workload
