#include "attention_steps.hpp"

#include <utility>

// Element-operation counts per score are this file's modelling choices, stated where used.
namespace trnsim::workload::steps {
namespace {

// Score elements of one micro-batch on this rank: b * heads * s^2; the flash kernel skips the
// tiles above the causal diagonal (lower triangle), a materialized batched GEMM computes them all.
double score_elements(const StepContext& c, bool skip_masked) {
  const double s = dbl(c.seq_len);
  const double per_head = skip_masked && c.d.causal ? s * (s + 1) / 2 : s * s;
  return dbl(c.micro_batch) * dbl(c.d.heads) * per_head;
}

// Flash-style attention core forward: S = Q K^T with online softmax, then O = P V. As NKI's
// flash-attention kernel maps it: the row max on the vector engine (1 op per score, +1 for the
// dropout mask) and exp(scale * s - max) with the row sum accumulated in the same scalar-engine
// activation (1 op per score). Nothing of size s x s leaves the chip.
Kernel flash_scores(const StepContext& c) {
  const auto& d = c.d;
  const std::int64_t bh = c.micro_batch * d.heads;
  const double e = c.act_bytes;
  const double t = dbl(c.tokens());
  const double scores = score_elements(c, true);
  Kernel qk = matmul("attn_scores", OpClass::Attention, c.seq_len, c.seq_len, d.head_dim, bh, e);
  qk.causal = d.causal ? CausalDim::N : CausalDim::None;
  qk.vector_elements = (d.dropout ? 2 : 1) * scores;
  qk.scalar_elements = scores;
  qk.hbm_bytes = e * t * dbl(d.q_width() + d.kv_width());  // reads Q and K
  return qk;
}

void flash_forward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t bh = c.micro_batch * d.heads;
  const double e = c.act_bytes;
  const double t = dbl(c.tokens());
  em.kernel(flash_scores(c));
  Kernel av = matmul("attn_values", OpClass::Attention, c.seq_len, d.head_dim, c.seq_len, bh, e);
  av.causal = d.causal ? CausalDim::K : CausalDim::None;
  av.vector_elements = t * dbl(d.q_width());  // final 1/rowsum scaling
  av.hbm_bytes = e * t * dbl(d.kv_width() + d.q_width()) + 4 * t * dbl(d.heads);  // V in, O and lse out
  em.kernel(std::move(av));
}

// Flash-style backward: dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)), dQ = dS K, dK = dS^T Q.
// dS costs 2 vector ops per score (+1 dropout), rowsum(dO O) 2 per output element.
// FLOPs 4 x 2 b heads s^2 d = twice the forward; P is rebuilt from Q, K and the saved row
// statistics by attention_rebuild, which precedes this (layer_backward emits it as recompute).
void flash_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t bh = c.micro_batch * d.heads;
  const std::int64_t s = c.seq_len;
  const double e = c.act_bytes;
  const double t = dbl(c.tokens());
  const double scores = score_elements(c, true);
  const CausalDim seq_k = d.causal ? CausalDim::K : CausalDim::None;
  Kernel dv = matmul("attn_dv", OpClass::Attention, s, d.head_dim, s, bh, e);
  dv.causal = seq_k;
  dv.hbm_bytes = 2 * e * t * dbl(d.q_width());  // dO and O
  em.kernel(std::move(dv));
  Kernel dp = matmul("attn_dp", OpClass::Attention, s, s, d.head_dim, bh, e);
  dp.causal = d.causal ? CausalDim::N : CausalDim::None;
  dp.vector_elements = (d.dropout ? 3 : 2) * scores + 2 * t * dbl(d.q_width());
  dp.hbm_bytes = e * t * dbl(d.kv_width());  // V
  em.kernel(std::move(dp));
  Kernel dq = matmul("attn_dq", OpClass::Attention, s, d.head_dim, s, bh, e);
  dq.causal = seq_k;
  dq.hbm_bytes = e * t * (dbl(d.kv_width()) + dbl(d.q_width()));  // K in, dQ out
  em.kernel(std::move(dq));
  Kernel dk = matmul("attn_dk", OpClass::Attention, s, d.head_dim, s, bh, e);
  dk.causal = seq_k;
  dk.hbm_bytes = e * t * (dbl(d.q_width()) + 2 * dbl(d.kv_width()));  // Q in, dK and dV out
  em.kernel(std::move(dk));
}

// Materialized attention (Megatron-LM's fused scale-mask-softmax, as in Narayanan et al. 2021):
// a batched GEMM writes all s x s scores (masked ones included) to HBM; the softmax kernel reads
// them and writes the probabilities; dropout draws a mask and writes the dropped probabilities and
// the 1-byte mask (2 vector ops per score); the second GEMM reads them back. Softmax per score:
// fused (Kernels::fused_softmax), the scale and the mask ride on the exponential's affine input
// and the row sum on its accumulator: row max, exp, normalise = 2 vector ops and 1 exp; unfused,
// scale, mask, row max, exp, row sum and divide run as separate passes: 5 vector ops and 1 exp,
// and each pass reads and writes the scores in HBM.
void materialized_forward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t bh = c.micro_batch * d.heads;
  const double e = c.act_bytes;
  const double t = dbl(c.tokens());
  const double scores = score_elements(c, false);
  Kernel qk = matmul("attn_scores", OpClass::Attention, c.seq_len, c.seq_len, d.head_dim, bh, e);
  qk.hbm_bytes = e * t * dbl(d.q_width() + d.kv_width()) + e * scores;  // Q, K in; S out
  em.kernel(std::move(qk));
  const double softmax_vector = c.kernels.fused_softmax ? 2 : 5;
  const double softmax_passes = c.kernels.fused_softmax ? 1 : 5;
  em.kernel(elementwise("softmax", OpClass::Attention, softmax_vector * scores, scores,
                        softmax_passes * 2 * e * scores));
  if (d.dropout) em.kernel(elementwise("attn_dropout", OpClass::Attention, 2 * scores, 0, (2 * e + 1) * scores));
  Kernel av = matmul("attn_values", OpClass::Attention, c.seq_len, d.head_dim, c.seq_len, bh, e);
  av.hbm_bytes = e * scores + e * t * dbl(d.kv_width() + d.q_width());  // P, V in; O out
  em.kernel(std::move(av));
}

// Materialized backward: dV = P^T dO reads the (dropped) probabilities; dP = dO V^T writes an
// s x s gradient; dropout backward reads it and the mask (1 vector op per score); softmax backward
// dS = P (dP - rowsum(dP P)) reads P and dP and writes dS (fused: the product-and-sum in one pass
// and the subtract-and-multiply in another, 2 vector ops per score; unfused 3 passes); dQ = dS K
// and dK = dS^T Q each read dS.
void materialized_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t bh = c.micro_batch * d.heads;
  const std::int64_t s = c.seq_len;
  const double e = c.act_bytes;
  const double t = dbl(c.tokens());
  const double scores = score_elements(c, false);
  Kernel dv = matmul("attn_dv", OpClass::Attention, s, d.head_dim, s, bh, e);
  dv.hbm_bytes = e * scores + e * t * (dbl(d.q_width()) + dbl(d.kv_width()));  // P, dO in; dV out
  em.kernel(std::move(dv));
  Kernel dp = matmul("attn_dp", OpClass::Attention, s, s, d.head_dim, bh, e);
  dp.hbm_bytes = e * t * (dbl(d.q_width()) + dbl(d.kv_width())) + e * scores;  // dO, V in; dP out
  em.kernel(std::move(dp));
  if (d.dropout) em.kernel(elementwise("attn_dropout_bwd", OpClass::Attention, scores, 0, (2 * e + 1) * scores));
  const double bwd_vector = c.kernels.fused_softmax ? 2 : 3;
  em.kernel(elementwise("softmax_bwd", OpClass::Attention, bwd_vector * scores, 0, bwd_vector * e * scores + e * scores));
  Kernel dq = matmul("attn_dq", OpClass::Attention, s, d.head_dim, s, bh, e);
  dq.hbm_bytes = e * scores + e * t * (dbl(d.kv_width()) + dbl(d.q_width()));  // dS, K in; dQ out
  em.kernel(std::move(dq));
  Kernel dk = matmul("attn_dk", OpClass::Attention, s, d.head_dim, s, bh, e);
  dk.hbm_bytes = e * scores + e * t * (dbl(d.q_width()) + dbl(d.kv_width()));  // dS, Q in; dK out
  em.kernel(std::move(dk));
}

}  // namespace

void attention_forward(const StepContext& c, Emitter& em) {
  if (c.attention == hw::AttentionKernel::Materialized) {
    materialized_forward(c, em);
  } else {
    flash_forward(c, em);
  }
}

void attention_rebuild(const StepContext& c, Emitter& em) {
  if (c.attention == hw::AttentionKernel::Materialized) {
    materialized_forward(c, em);
  } else {
    em.kernel(flash_scores(c));
  }
}

void attention_backward(const StepContext& c, Emitter& em) {
  if (c.attention == hw::AttentionKernel::Materialized) {
    materialized_backward(c, em);
  } else {
    flash_backward(c, em);
  }
}

}  // namespace trnsim::workload::steps
