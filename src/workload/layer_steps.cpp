#include "layer_steps.hpp"

#include <utility>

#include "attention_steps.hpp"
#include "context_steps.hpp"
#include "mla_steps.hpp"
#include "moe_steps.hpp"
#include "step_emitter.hpp"
#include "trnsim/workload/plan.hpp"

// Element-operation counts per element are this file's modelling choices, stated where used; the
// engine rates they divide by come from the hardware file.
namespace trnsim::workload {
namespace {

using cost::Kernel;
using cost::OpClass;
using steps::attention_backward;
using steps::attention_forward;
using steps::dbl;
using steps::elementwise;
using steps::Emitter;
using steps::local_tokens;
using steps::matmul;
using steps::norm;
using steps::residual;

// Rotary embedding of Q and K (under MLA their rotary parts: LayerDims::rope_width): x cos +
// rotate(x) sin, 3 vector ops per element.
Kernel rotary(const StepContext& c, const char* name) {
  const double n = dbl(c.tokens()) * dbl(c.d.rope_width());
  return elementwise(name, OpClass::Elementwise, 3 * n, 0, 2 * c.act_bytes * n);
}

Kernel activation(const StepContext& c, bool backward) {
  return steps::activation(c, dbl(c.tokens()) * dbl(c.d.ffn), backward);
}

std::int64_t fc1_width(const LayerDims& d) { return steps::fc1_width(d, d.ffn); }

// A task boundary between layers (and between a layer and the embedding or head): without it,
// where no TP collective stands at the boundary (tp = 1, or TP without SP), a layer's last kernels
// would share a task with the next layer's first, so its gradient would count as ready only after
// part of the next layer's backward, and the task's layer would be the later one.
void layer_boundary(Steps& out) {
  Step s;
  s.kind = Step::Kind::Cut;
  out.push_back(std::move(s));
}

// TorchTitan's per-operator policy (Recompute::SelectiveOp, specs.hpp): the forward kernels the
// backward reruns. Kept: the odd matmul outputs in TorchTitan's order q, k, v, o, [gate, up,] down
// (q, v, the gate under SwiGLU, fc1 under GELU, the down projection), the attention kernel's
// output and the TP reduce-scatters' outputs. The rerun follows the forward and stops at the last
// tensor the backward needs (PyTorch checkpoint's early stop), the MLP activation's output (the
// down projection's input), so it reruns: norm1, the SP all-gather of its output, the k share of
// the fused qkv GEMM, rotary, the output projection (its all-reduce without SP), residual1, norm2,
// its SP all-gather, the up share of the gate+up GEMM under SwiGLU, the activation. Recomputed
// matmul FLOPs per layer: 2 T h (kv_r + q_r) [k, o] + 2 T h f_r [up, SwiGLU only]. A MoE layer's
// expert block is not rerun (assumption: the policy's treatment of the grouped expert GEMMs is not
// in the software facts); its attention half and norm2 are.
void op_policy_recompute(const StepContext& c, std::int32_t layer, Steps& out) {
  Emitter em(c, layer, Category::Recompute, out);
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  em.kernel(norm(c, "norm1", false));
  em.enter_region();
  if (d.mla) {
    // MLA's five matmuls q_down, q_up, kv_down, kv_up, o: the two up-projections (2nd, 4th) and
    // the latent norms feeding them are rerun; o (5th) is kept.
    steps::mla_op_policy_recompute(c, em);
  } else {
    em.kernel(matmul("k", OpClass::Matmul, t, d.k_width(), d.hidden, 1, e));
  }
  if (d.rotary) em.kernel(rotary(c, "rotary"));
  if (!d.mla) {
    em.kernel(matmul("attn_out", OpClass::Matmul, t, d.hidden, d.o_width(), 1, e));
    if (!c.sequence_parallel && d.tp > 1) em.leave_region();
  }
  em.kernel(residual(c, "residual1"));
  em.kernel(norm(c, "norm2", false));
  if (d.moe_layer(layer)) return;
  em.enter_region();
  // The MLP's rerun matmul: the up projection (6th) after MHA's four, the gate (6th) after MLA's
  // five; the same shape.
  if (d.swiglu) em.kernel(matmul(d.mla ? "gate" : "up", OpClass::Matmul, t, d.ffn, d.hidden, 1, e));
  em.kernel(activation(c, false));
}

}  // namespace

void layer_forward(const StepContext& c, std::int32_t layer, Category category, Steps& out) {
  layer_boundary(out);
  Emitter em(c, layer, category, out);
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  const std::int64_t qkv = d.q_width() + d.k_width() + d.v_width();
  em.kernel(norm(c, "norm1", false));
  em.enter_region();
  if (d.mla) {
    steps::mla_projections_forward(c, em);
  } else {
    em.kernel(matmul("qkv", OpClass::Matmul, t, qkv, d.hidden, 1, e));
  }
  if (d.rotary) em.kernel(rotary(c, "rotary"));
  if (c.cp > 1) {
    steps::context_attention_forward(c, em);
  } else {
    attention_forward(c, em);
  }
  em.kernel(matmul("attn_out", OpClass::Matmul, t, d.hidden, d.o_width(), 1, e));
  em.leave_region();
  em.kernel(residual(c, "residual1"));
  em.kernel(norm(c, "norm2", false));
  if (d.moe_layer(layer)) {
    steps::moe_forward(c, em);
  } else {
    em.enter_region();
    em.kernel(matmul("fc1", OpClass::Matmul, t, fc1_width(d), d.hidden, 1, e));
    em.kernel(activation(c, false));
    em.kernel(matmul("fc2", OpClass::Matmul, t, d.hidden, d.ffn, 1, e));
    em.leave_region();
  }
  em.kernel(residual(c, "residual2"));
}

void layer_backward(const StepContext& c, std::int32_t layer, Steps& out) {
  layer_boundary(out);
  // Full-every-n reaches here as Full or None (Plan::layer_mode).
  if (c.recompute == Recompute::Full) layer_forward(c, layer, Category::Recompute, out);
  if (c.recompute == Recompute::SelectiveOp) op_policy_recompute(c, layer, out);
  // The flash kernel rebuilds the probabilities in the backward pass whatever the mode (under CP
  // inside each block's backward: context_steps.hpp).
  if (c.cp == 1 && steps::rebuilds_attention(c)) {
    Emitter rec(c, layer, Category::Recompute, out);
    steps::attention_rebuild(c, rec);
  }
  Emitter em(c, layer, Category::Backward, out);
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  const std::int64_t qkv = d.q_width() + d.k_width() + d.v_width();
  // dgrad: dX[T x in] = dY[T x out] W^T; wgrad: dW[in x out] = X^T[in x T] dY[T x out].
  if (d.moe_layer(layer)) {
    steps::moe_backward(c, em);
  } else {
    em.leave_region_backward_deferring_input();
    em.kernel(matmul("fc2_dgrad", OpClass::Matmul, t, d.ffn, d.hidden, 1, e));
    em.kernel(steps::wgrad(c, "fc2_wgrad", d.ffn, d.hidden, t, e));
    em.kernel(activation(c, true));
    em.enter_region_backward(matmul("fc1_dgrad", OpClass::Matmul, t, d.hidden, fc1_width(d), 1, e),
                             steps::wgrad(c, "fc1_wgrad", d.hidden, fc1_width(d), t, e));
  }
  em.kernel(norm(c, "norm2_bwd", true));
  // MLA's two down-projections both read the layer input: its gather stays with the first one.
  if (d.mla) {
    em.leave_region_backward(2);
  } else {
    em.leave_region_backward_deferring_input();
  }
  em.kernel(matmul("attn_out_dgrad", OpClass::Matmul, t, d.o_width(), d.hidden, 1, e));
  em.kernel(steps::wgrad(c, "attn_out_wgrad", d.o_width(), d.hidden, t, e));
  if (c.cp > 1) {
    steps::context_attention_backward(c, em);
  } else {
    attention_backward(c, em);
  }
  if (d.rotary) em.kernel(rotary(c, "rotary_bwd"));
  if (d.mla) {
    steps::mla_projections_backward(c, em);
  } else {
    em.enter_region_backward(matmul("qkv_dgrad", OpClass::Matmul, t, d.hidden, qkv, 1, e),
                             steps::wgrad(c, "qkv_wgrad", d.hidden, qkv, t, e));
  }
  em.kernel(norm(c, "norm1_bwd", true));
  if (steps::accumulates_separately(c)) {
    const LayerParameters lp = layer_parameters(d, layer);
    em.kernel(steps::gradient_accumulation(c, lp.total(), lp.experts));
  }
}

// Vocabulary-parallel embedding: each rank looks up the tokens of its vocabulary shard (zeros for
// the others) and the partial results are summed over TP (all-reduce, or reduce-scatter under SP).
void embedding_forward(const StepContext& c, Steps& out) {
  Emitter em(c, -1, Category::Forward, out);
  const double n = dbl(c.tokens()) * dbl(c.d.hidden);
  const double e = c.act_bytes;
  em.kernel(elementwise("embedding", OpClass::Embedding, n, 0, 2 * e * n));
  em.leave_region();
  if (c.learned_positions || c.d.dropout) {
    const double local = local_tokens(c) * dbl(c.d.hidden);
    em.kernel(elementwise("positions_dropout", OpClass::Embedding, 2 * local, 0, 3 * e * local));
  }
}

void embedding_backward(const StepContext& c, Steps& out) {
  layer_boundary(out);
  Emitter em(c, -1, Category::Backward, out);
  const double n = dbl(c.tokens()) * dbl(c.d.hidden);
  const double e = c.act_bytes;
  em.leave_region_backward(1);
  // Scatter-add of the token gradients into this rank's vocabulary rows (read-modify-write).
  em.kernel(elementwise("embedding_wgrad", OpClass::Embedding, n, 0, 3 * e * n));
  if (steps::accumulates_separately(c)) {
    em.kernel(steps::gradient_accumulation(c, embedding_parameters(c.d, c.positions, c.learned_positions)));
  }
}

void head_forward(const StepContext& c, Steps& out) {
  layer_boundary(out);
  Emitter em(c, -1, Category::Forward, out);
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  const double logits = dbl(t) * dbl(d.vocab);
  em.kernel(norm(c, "final_norm", false));
  em.enter_region();
  em.kernel(matmul("lm_head", OpClass::Matmul, t, d.vocab, d.hidden, 1, e));
  // Vocabulary-parallel cross-entropy: per-token max, target logit and sum of exponentials are
  // all-reduced over TP (Megatron-LM: three fp32 all-reduces of T values, one call here).
  em.kernel(elementwise("loss", OpClass::Loss, 4 * logits, logits, logits * (e + 4)));
  em.loss_collective(3 * 4 * dbl(t));
}

void head_backward(const StepContext& c, Steps& out) {
  Emitter em(c, -1, Category::Backward, out);
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  const double logits = dbl(t) * dbl(d.vocab);
  em.kernel(elementwise("loss_bwd", OpClass::Loss, 2 * logits, 0, logits * (e + 4)));
  em.kernel(matmul("lm_head_dgrad", OpClass::Matmul, t, d.hidden, d.vocab, 1, e));
  em.enter_region_backward(steps::wgrad(c, "lm_head_wgrad", d.vocab, d.hidden, t, e));
  em.kernel(norm(c, "final_norm_bwd", true));
  if (steps::accumulates_separately(c)) em.kernel(steps::gradient_accumulation(c, c.head_parameters));
}

cost::Kernel optimizer_kernel(const PrecisionRecipe& precision, Optimizer optimizer, double n) {
  const double gb = bytes(precision.grad_accumulation);
  const double wb = bytes(precision.weights);
  const double mb = bytes(precision.master_weights);
  const double ob = bytes(precision.optimizer_states);
  const bool adam = optimizer != Optimizer::Sgd;
  const double moments = adam ? 2 : 1;
  // Adam(W): moment updates, bias correction, division, weight decay and step: 10 vector ops and
  // one sqrt (scalar) per parameter; SGD with momentum: 3. Stochastic rounding of the bf16 results
  // (weights and moments) draws random bits and adds them before truncation: 2 ops per rounded
  // value. Traffic: the accumulated gradient read, the moments read and written, the master copy
  // read and written and the weights written (without a master copy the weights are read too).
  double ops = adam ? 10 : 3;
  if (precision.stochastic_rounding) ops += 2 * (1 + moments);
  const double bytes = n * (gb + 2 * moments * ob + (mb > 0 ? 2 * mb + wb : 2 * wb));
  Kernel k = elementwise(adam ? "adam" : "sgd", OpClass::Optimizer, ops * n, adam ? n : 0, bytes);
  k.low_precision = false;
  return k;
}

cost::Kernel gradient_norm_kernel(const PrecisionRecipe& precision, double n) {
  // Square and add per gradient (2 vector ops), each accumulated gradient read once.
  Kernel k = elementwise("grad_norm", OpClass::Optimizer, 2 * n, 0, n * bytes(precision.grad_accumulation));
  k.low_precision = false;
  return k;
}

}  // namespace trnsim::workload
