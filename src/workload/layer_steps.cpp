#include "layer_steps.hpp"

#include <utility>

#include "trnsim/workload/plan.hpp"

// Element-operation counts per element are this file's modelling choices, stated where used; the
// engine rates they divide by come from the hardware file.
namespace trnsim::workload {
namespace {

using cost::CausalDim;
using cost::Kernel;
using cost::OpClass;

double dbl(std::int64_t v) { return static_cast<double>(v); }

Kernel matmul(const char* name, OpClass op, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
              double e) {
  Kernel kr;
  kr.name = name;
  kr.op = op;
  kr.m = m;
  kr.n = n;
  kr.k = k;
  kr.batch = batch;
  // Each operand read once and the result written once: activations do not stay in SBUF across kernels.
  kr.hbm_bytes = e * dbl(batch) * (dbl(m) * dbl(k) + dbl(k) * dbl(n) + dbl(m) * dbl(n));
  kr.flops = 2.0 * dbl(m) * dbl(n) * dbl(k) * dbl(batch);
  return kr;
}

Kernel elementwise(const char* name, OpClass op, double vector, double scalar, double hbm) {
  Kernel kr;
  kr.name = name;
  kr.op = op;
  kr.vector_elements = vector;
  kr.scalar_elements = scalar;
  kr.hbm_bytes = hbm;
  return kr;
}

class Emitter {
 public:
  Emitter(const StepContext& c, std::int32_t layer, Category cat, Steps& out)
      : c_(c), layer_(layer), cat_(cat), out_(out) {}
  void kernel(Kernel k) {
    Step s;
    s.kind = Step::Kind::Kernel;
    s.category = cat_;
    s.layer = layer_;
    s.kernel = std::move(k);
    out_.push_back(std::move(s));
  }
  void collective(CollectiveOp op, double bytes) {
    Step s;
    s.kind = c_.d.tp == 1 ? Step::Kind::Cut : Step::Kind::TpCollective;
    s.category = cat_;
    s.layer = layer_;
    s.op = op;
    s.bytes = bytes;
    out_.push_back(std::move(s));
  }
  // Megatron f/g operators around a tensor-parallel region, on a full-sequence activation of
  // T*h elements: entering the region all-gathers it under sequence parallelism (identity without),
  // leaving it reduce-scatters it (all-reduce without).
  void enter_region() {
    if (c_.sequence_parallel) collective(CollectiveOp::AllGather, full_activation());
  }
  // The cross-entropy all-reduce: no task boundary of its own at tp = 1.
  void loss_collective(double bytes) {
    if (c_.d.tp > 1) collective(CollectiveOp::AllReduce, bytes);
  }
  void leave_region() {
    collective(c_.sequence_parallel ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, full_activation());
  }
  // Backward of enter_region: reduce-scatter (SP) or all-reduce of the input gradient.
  void enter_region_backward() { leave_region(); }
  // Backward of leave_region: all-gather of the output gradient (SP), identity without. Under
  // SP the region's input is stored sharded and gathered again here for the weight gradients
  // (Korthikanti et al. 2022, section 4.2.2): one all-gather call of both tensors.
  void leave_region_backward(int tensors) {
    if (c_.sequence_parallel) collective(CollectiveOp::AllGather, tensors * full_activation());
  }
  double full_activation() const { return dbl(c_.tokens()) * dbl(c_.d.hidden) * c_.act_bytes; }

 private:
  const StepContext& c_;
  std::int32_t layer_;
  Category cat_;
  Steps& out_;
};

// Tokens a norm, residual or dropout touches on this rank: the sequence is sharded under SP.
double local_tokens(const StepContext& c) {
  return c.sequence_parallel ? dbl(c.tokens()) / dbl(c.d.tp) : dbl(c.tokens());
}

// Norm: LayerNorm 6 vector ops per element (sum, square-sum, subtract, scale, gain, bias),
// RMSNorm 4 (square-sum, scale, gain, and the reduction add); one rsqrt per token on the scalar
// engine. Backward: twice the forward count plus the residual-gradient add.
Kernel norm(const StepContext& c, const char* name, bool backward) {
  const double n = local_tokens(c) * dbl(c.d.hidden);
  const double ops = c.d.rmsnorm ? 4 : 6;
  const double e = c.act_bytes;
  if (!backward) return elementwise(name, OpClass::Norm, ops * n, local_tokens(c), 2 * e * n);
  return elementwise(name, OpClass::Norm, (2 * ops + 1) * n, local_tokens(c), 4 * e * n);
}

// Residual add (+ dropout: mask multiply and a 1-byte mask written).
Kernel residual(const StepContext& c, const char* name) {
  const double n = local_tokens(c) * dbl(c.d.hidden);
  const double e = c.act_bytes;
  return elementwise(name, OpClass::Elementwise, c.d.dropout ? 2 * n : n, 0,
                     3 * e * n + (c.d.dropout ? n : 0));
}

// Score elements of one micro-batch on this rank: b * heads * s^2, lower triangle when causal.
double score_elements(const StepContext& c) {
  const double s = dbl(c.seq_len);
  const double per_head = c.d.causal ? s * (s + 1) / 2 : s * s;
  return dbl(c.micro_batch) * dbl(c.d.heads) * per_head;
}

// Flash-style attention core forward: S = Q K^T with online softmax, then O = P V. As NKI's
// flash-attention kernel maps it: the row max on the vector engine (1 op per score, +1 for the
// dropout mask) and exp(scale * s - max) with the row sum accumulated in the same scalar-engine
// activation (1 op per score).
void attention_forward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t bh = c.micro_batch * d.heads;
  const double e = c.act_bytes;
  const double t = dbl(c.tokens());
  const double scores = score_elements(c);
  const bool keep_probs = c.recompute == Recompute::None;  // probabilities stored for backward
  Kernel qk = matmul("attn_scores", OpClass::Attention, c.seq_len, c.seq_len, d.head_dim, bh, e);
  qk.causal = d.causal ? CausalDim::N : CausalDim::None;
  qk.vector_elements = (d.dropout ? 2 : 1) * scores;
  qk.scalar_elements = scores;
  qk.hbm_bytes = e * t * dbl(d.q_width() + d.kv_width());  // reads Q and K; S never leaves SBUF
  if (keep_probs) qk.hbm_bytes += scores * (e + (d.dropout ? 1 : 0));
  em.kernel(std::move(qk));
  Kernel av = matmul("attn_values", OpClass::Attention, c.seq_len, d.head_dim, c.seq_len, bh, e);
  av.causal = d.causal ? CausalDim::K : CausalDim::None;
  av.vector_elements = t * dbl(d.q_width());  // final 1/rowsum scaling
  av.hbm_bytes = e * t * dbl(d.kv_width() + d.q_width()) + 4 * t * dbl(d.heads);  // V in, O and lse out
  em.kernel(std::move(av));
}

// Flash-style backward: dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)), dQ = dS K, dK = dS^T Q.
// dS costs 2 vector ops per score (+1 dropout), rowsum(dO O) 2 per output element.
// FLOPs 4 x 2 b heads s^2 d = twice the forward. P comes from the recompute (selective/full) or
// from HBM (none).
void attention_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t bh = c.micro_batch * d.heads;
  const std::int64_t s = c.seq_len;
  const double e = c.act_bytes;
  const double t = dbl(c.tokens());
  const double scores = score_elements(c);
  const CausalDim seq_k = d.causal ? CausalDim::K : CausalDim::None;
  Kernel dv = matmul("attn_dv", OpClass::Attention, s, d.head_dim, s, bh, e);
  dv.causal = seq_k;
  dv.hbm_bytes = 2 * e * t * dbl(d.q_width());  // dO and O
  if (c.recompute == Recompute::None) dv.hbm_bytes += scores * (e + (d.dropout ? 1 : 0));
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

// Rotary embedding of Q and K: x cos + rotate(x) sin, 3 vector ops per element.
Kernel rotary(const StepContext& c, const char* name) {
  const double n = dbl(c.tokens()) * dbl(c.d.q_width() + c.d.kv_width());
  return elementwise(name, OpClass::Elementwise, 3 * n, 0, 2 * c.act_bytes * n);
}

// GELU: one scalar-engine activation per element. SwiGLU: silu on the scalar engine and the
// gate product on the vector engine. Backward: derivative lookup and products.
Kernel activation(const StepContext& c, bool backward) {
  const double n = dbl(c.tokens()) * dbl(c.d.ffn);
  const double e = c.act_bytes;
  if (!c.d.swiglu) {
    return backward ? elementwise("gelu_bwd", OpClass::Activation, n, n, 3 * e * n)
                    : elementwise("gelu", OpClass::Activation, 0, n, 2 * e * n);
  }
  return backward ? elementwise("swiglu_bwd", OpClass::Activation, 4 * n, n, 5 * e * n)
                  : elementwise("swiglu", OpClass::Activation, n, n, 3 * e * n);
}

std::int64_t fc1_width(const LayerDims& d) { return d.swiglu ? 2 * d.ffn : d.ffn; }

// A task boundary between layers (and between a layer and the embedding or head): without it,
// where no TP collective stands at the boundary (tp = 1, or TP without SP), a layer's last kernels
// would share a task with the next layer's first, so its gradient would count as ready only after
// part of the next layer's backward, and the task's layer would be the later one.
void layer_boundary(Steps& out) {
  Step s;
  s.kind = Step::Kind::Cut;
  out.push_back(std::move(s));
}

}  // namespace

void layer_forward(const StepContext& c, std::int32_t layer, Category category, Steps& out) {
  layer_boundary(out);
  Emitter em(c, layer, category, out);
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  const std::int64_t qkv = d.q_width() + 2 * d.kv_width();
  em.kernel(norm(c, "norm1", false));
  em.enter_region();
  em.kernel(matmul("qkv", OpClass::Matmul, t, qkv, d.hidden, 1, e));
  if (d.rotary) em.kernel(rotary(c, "rotary"));
  attention_forward(c, em);
  em.kernel(matmul("attn_out", OpClass::Matmul, t, d.hidden, d.q_width(), 1, e));
  em.leave_region();
  em.kernel(residual(c, "residual1"));
  em.kernel(norm(c, "norm2", false));
  em.enter_region();
  em.kernel(matmul("fc1", OpClass::Matmul, t, fc1_width(d), d.hidden, 1, e));
  em.kernel(activation(c, false));
  em.kernel(matmul("fc2", OpClass::Matmul, t, d.hidden, d.ffn, 1, e));
  em.leave_region();
  em.kernel(residual(c, "residual2"));
}

void layer_backward(const StepContext& c, std::int32_t layer, Steps& out) {
  layer_boundary(out);
  if (c.recompute == Recompute::Full) layer_forward(c, layer, Category::Recompute, out);
  if (c.recompute == Recompute::Selective) {
    Emitter rec(c, layer, Category::Recompute, out);
    attention_forward(c, rec);
  }
  Emitter em(c, layer, Category::Backward, out);
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  const std::int64_t qkv = d.q_width() + 2 * d.kv_width();
  // dgrad: dX[T x in] = dY[T x out] W^T; wgrad: dW[in x out] = X^T[in x T] dY[T x out].
  em.leave_region_backward(2);
  em.kernel(matmul("fc2_dgrad", OpClass::Matmul, t, d.ffn, d.hidden, 1, e));
  em.kernel(matmul("fc2_wgrad", OpClass::Matmul, d.ffn, d.hidden, t, 1, e));
  em.kernel(activation(c, true));
  em.kernel(matmul("fc1_dgrad", OpClass::Matmul, t, d.hidden, fc1_width(d), 1, e));
  em.kernel(matmul("fc1_wgrad", OpClass::Matmul, d.hidden, fc1_width(d), t, 1, e));
  em.enter_region_backward();
  em.kernel(norm(c, "norm2_bwd", true));
  em.leave_region_backward(2);
  em.kernel(matmul("attn_out_dgrad", OpClass::Matmul, t, d.q_width(), d.hidden, 1, e));
  em.kernel(matmul("attn_out_wgrad", OpClass::Matmul, d.q_width(), d.hidden, t, 1, e));
  attention_backward(c, em);
  if (d.rotary) em.kernel(rotary(c, "rotary_bwd"));
  em.kernel(matmul("qkv_dgrad", OpClass::Matmul, t, d.hidden, qkv, 1, e));
  em.kernel(matmul("qkv_wgrad", OpClass::Matmul, d.hidden, qkv, t, 1, e));
  em.enter_region_backward();
  em.kernel(norm(c, "norm1_bwd", true));
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
  em.kernel(matmul("lm_head_wgrad", OpClass::Matmul, d.vocab, d.hidden, t, 1, e));
  em.enter_region_backward();
  em.kernel(norm(c, "final_norm_bwd", true));
}

cost::Kernel optimizer_kernel(Precision precision, Optimizer optimizer, double n) {
  const double gb = gradient_bytes(precision);
  const double wb = weight_bytes(precision);
  const double ob = optimizer_bytes(precision, optimizer);
  const bool master = precision == Precision::Bf16 || precision == Precision::Fp16 || precision == Precision::Fp8;
  const bool adam = optimizer != Optimizer::Sgd;
  // Adam(W): moment updates, bias correction, division, weight decay and step: 10 vector ops and
  // one sqrt (scalar) per parameter; SGD with momentum: 3. Traffic: gradient read, states read
  // and written, weights written (and read too when no fp32 master copy is among the states).
  Kernel k = elementwise(adam ? "adam" : "sgd", OpClass::Optimizer, (adam ? 10 : 3) * n, adam ? n : 0,
                         n * (gb + 2 * ob + (master ? wb : 2 * wb)));
  k.low_precision = false;
  return k;
}

}  // namespace trnsim::workload
