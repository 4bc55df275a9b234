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

// The figures every attention kernel of one micro-batch on this rank is sized by. `skip_n` /
// `skip_k`: the dimension along which a causal kernel skips the masked tiles, None where it
// computes them all (materialized attention, or no causal mask).
struct Sizes {
  std::int64_t bh;     // batched products: b * heads
  std::int64_t s;      // sequence length
  std::int64_t hd;     // query/key head width (the width Q K^T contracts over)
  std::int64_t hv;     // value head width (P V's output, dO V^T's contraction)
  double e;            // bytes per activation element
  double t;            // tokens
  double scores;       // score elements (score_elements)
  CausalDim skip_n, skip_k;
};

Sizes sizes(const StepContext& c, bool skip_masked) {
  const bool skip = skip_masked && c.d.causal;
  return Sizes{c.micro_batch * c.d.heads, c.seq_len, c.d.head_dim, c.d.v_head_dim, c.act_bytes, dbl(c.tokens()),
               score_elements(c, skip_masked), skip ? CausalDim::N : CausalDim::None,
               skip ? CausalDim::K : CausalDim::None};
}

// One of attention's batched GEMMs, [m x k] * [k x n] per product. Its HBM traffic is the
// caller's: which operands stay on chip (flash) or go through HBM (materialized) is the kernel's
// design, not matmul's one read per operand.
Kernel gemm(const char* name, const Sizes& z, std::int64_t m, std::int64_t n, std::int64_t k, CausalDim causal,
            double hbm_bytes) {
  Kernel kr = matmul(name, OpClass::Attention, m, n, k, z.bh, z.e);
  kr.causal = causal;
  kr.hbm_bytes = hbm_bytes;
  return kr;
}

// Flash-style attention core forward: S = Q K^T with online softmax, then O = P V. As NKI's
// flash-attention kernel maps it: the row max on the vector engine (1 op per score, +1 for the
// dropout mask) and exp(scale * s - max) with the row sum accumulated in the same scalar-engine
// activation (1 op per score). Nothing of size s x s leaves the chip.
Kernel flash_scores(const StepContext& c) {
  const auto& d = c.d;
  const Sizes z = sizes(c, true);
  Kernel qk = gemm("attn_scores", z, z.s, z.s, z.hd, z.skip_n, z.e * z.t * dbl(d.q_width() + d.k_width()));  // Q, K
  qk.vector_elements = (d.dropout ? 2 : 1) * z.scores;
  qk.scalar_elements = z.scores;
  // The activation reads the scores from PSUM and writes P to SBUF: that is their copy out.
  qk.fused_epilogue = true;
  return qk;
}

// P (or dS) transposed for the next product: nc_matmul contracts over the partition axis, and P
// leaves the softmax with the query rows there, where P V contracts over the keys. Assumption:
// NKI's flash kernels transpose each 128 x 128 tile on the tensor engine (nc_transpose, a matmul
// against the identity; shared/data/hardware.md, "Transposes"), and the vector engine copies the
// result out of PSUM. No FLOPs; skipped above the causal diagonal as the scores are.
Kernel flash_transpose(const char* name, const Sizes& z) {
  Kernel t = gemm(name, z, z.s, z.s, 1, z.skip_n, 0);
  t.flops = 0;
  t.transpose = true;
  return t;
}

void flash_forward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const Sizes z = sizes(c, true);
  em.kernel(flash_scores(c));
  em.kernel(flash_transpose("attn_p_transpose", z));
  // V in, O and the row statistics (lse) out.
  Kernel av = gemm("attn_values", z, z.s, z.hv, z.s, z.skip_k,
                   z.e * z.t * dbl(d.v_width() + d.o_width()) + 4 * z.t * dbl(d.heads));
  av.vector_elements = z.t * dbl(d.o_width());  // final 1/rowsum scaling
  av.fused_epilogue = true;                      // which is O's copy out of PSUM
  em.kernel(std::move(av));
}

// Flash-style backward: dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)), dQ = dS K, dK = dS^T Q.
// dS costs 2 vector ops per score (+1 dropout), rowsum(dO O) 2 per output element.
// FLOPs 2 x 2 b heads s^2 (d_qk + d_v) = twice the forward (d_qk = d_v but under MLA); P is
// rebuilt from Q, K and the saved row statistics by attention_rebuild, which precedes this
// (layer_backward emits it as recompute).
void flash_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const Sizes z = sizes(c, true);
  const double e = z.e, t = z.t;
  em.kernel(gemm("attn_dv", z, z.s, z.hv, z.s, z.skip_k, 2 * e * t * dbl(d.o_width())));  // dO and O
  Kernel dp = gemm("attn_dp", z, z.s, z.s, z.hv, z.skip_n, e * t * dbl(d.v_width()));   // V
  dp.vector_elements = (d.dropout ? 3 : 2) * z.scores + 2 * t * dbl(d.o_width());
  dp.fused_epilogue = true;  // dS is computed from dP where it accumulates
  em.kernel(std::move(dp));
  // dQ = dS K contracts over the keys: dS transposed, as P in the forward.
  em.kernel(flash_transpose("attn_ds_transpose", z));
  // K in, dQ out; then Q in, dK and dV out.
  em.kernel(gemm("attn_dq", z, z.s, z.hd, z.s, z.skip_k, e * t * (dbl(d.k_width()) + dbl(d.q_width()))));
  em.kernel(gemm("attn_dk", z, z.s, z.hd, z.s, z.skip_k, e * t * (dbl(d.q_width()) + dbl(d.k_width() + d.v_width()))));
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
  const Sizes z = sizes(c, false);
  const double e = z.e, t = z.t, scores = z.scores;
  // Q, K in; S out.
  em.kernel(gemm("attn_scores", z, z.s, z.s, z.hd, z.skip_n, e * t * dbl(d.q_width() + d.k_width()) + e * scores));
  const double softmax_vector = c.kernels.fused_softmax ? 2 : 5;
  const double softmax_passes = c.kernels.fused_softmax ? 1 : 5;
  em.kernel(elementwise("softmax", OpClass::Attention, softmax_vector * scores, scores,
                        softmax_passes * 2 * e * scores));
  if (d.dropout) em.kernel(elementwise("attn_dropout", OpClass::Attention, 2 * scores, 0, (2 * e + 1) * scores));
  // P, V in; O out.
  em.kernel(gemm("attn_values", z, z.s, z.hv, z.s, z.skip_k, e * scores + e * t * dbl(d.v_width() + d.o_width())));
}

// Materialized backward: dV = P^T dO reads the (dropped) probabilities; dP = dO V^T writes an
// s x s gradient; dropout backward reads it and the mask (1 vector op per score); softmax backward
// dS = P (dP - rowsum(dP P)) reads P and dP and writes dS (fused: the product-and-sum in one pass
// and the subtract-and-multiply in another, 2 vector ops per score; unfused 3 passes); dQ = dS K
// and dK = dS^T Q each read dS.
void materialized_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const Sizes z = sizes(c, false);
  const double e = z.e, t = z.t, scores = z.scores;
  // P, dO in; dV out. Then dO, V in; dP out.
  em.kernel(gemm("attn_dv", z, z.s, z.hv, z.s, z.skip_k, e * scores + e * t * (dbl(d.o_width()) + dbl(d.v_width()))));
  em.kernel(gemm("attn_dp", z, z.s, z.s, z.hv, z.skip_n, e * t * (dbl(d.o_width()) + dbl(d.v_width())) + e * scores));
  if (d.dropout) em.kernel(elementwise("attn_dropout_bwd", OpClass::Attention, scores, 0, (2 * e + 1) * scores));
  const double bwd_vector = c.kernels.fused_softmax ? 2 : 3;
  em.kernel(elementwise("softmax_bwd", OpClass::Attention, bwd_vector * scores, 0,
                        bwd_vector * e * scores + e * scores));
  // dS, K in; dQ out. Then dS, Q in; dK out.
  em.kernel(gemm("attn_dq", z, z.s, z.hd, z.s, z.skip_k, e * scores + e * t * (dbl(d.k_width()) + dbl(d.q_width()))));
  em.kernel(gemm("attn_dk", z, z.s, z.hd, z.s, z.skip_k, e * scores + e * t * (dbl(d.q_width()) + dbl(d.k_width()))));
}

}  // namespace

void attention_forward(const StepContext& c, Emitter& em) {
  if (c.attention == hw::AttentionKernel::Materialized) {
    materialized_forward(c, em);
  } else {
    flash_forward(c, em);
  }
}

bool rebuilds_attention(const StepContext& c) {
  return c.recompute == Recompute::Selective || c.recompute == Recompute::SelectiveOp ||
         (c.recompute == Recompute::None && c.attention == hw::AttentionKernel::Flash);
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
