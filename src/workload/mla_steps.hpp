#pragma once
// The projections of multi-head latent attention (LayerDims::mla; shapes and TP sharding in
// workload/model_math.hpp) for one micro-batch on one TP rank, forward and backward. They stand
// where MHA's QKV GEMM stands: after the TP region's entry (the all-gather under SP) and before the
// rotary embedding and the attention core, whose Q and K are qk_nope + qk_rope wide per head and
// V v_head wide (attention_steps.hpp). Internal to the workload layer.
//
// Forward, T tokens of the micro-batch (all of them on every TP rank, as the QKV GEMM), h hidden,
// r_q, r_kv the latent widths, H_l the rank's heads, d_n, d_r, d_v the head widths:
//   mla_q_down   [T x h] -> [T x r_q]                 replicated over TP
//   mla_q_norm   RMSNorm over T x r_q                 replicated
//   mla_q_up     [T x r_q] -> [T x H_l (d_n + d_r)]   column-parallel
//   mla_kv_down  [T x h] -> [T x (r_kv + d_r)]        replicated (latent and the shared rotary key)
//   mla_kv_norm  RMSNorm over T x r_kv                replicated
//   mla_kv_up    [T x r_kv] -> [T x H_l (d_n + d_v)]  column-parallel (K_nope and V)
// The shared rotary key is appended to every head's K_nope inside the attention kernel's load of
// K (no separate copy is priced). Backward: each GEMM's dgrad and wgrad in reverse order, the
// norms' backward; the two down-projections' input gradients are added into the TP region's input
// gradient by the second dgrad (beta = 1, no separate add), and the first down-projection's wgrad
// is the region's entry wgrad (Emitter::enter_region_backward).
#include "step_emitter.hpp"

namespace trnsim::workload::steps {

// The six kernels above, forward (also the recompute of a fully recomputed layer).
void mla_projections_forward(const StepContext& c, Emitter& em);
// Their backward, ending with the TP region's entry (enter_region_backward).
void mla_projections_backward(const StepContext& c, Emitter& em);
// What TorchTitan's per-operator recompute policy (Recompute::SelectiveOp) reruns of them: the
// latent norms and the up-projections (the 2nd and 4th matmuls of the layer; the down-projections'
// outputs, 1st and 3rd, are kept).
void mla_op_policy_recompute(const StepContext& c, Emitter& em);

}  // namespace trnsim::workload::steps
