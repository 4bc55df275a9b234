#include "moe_steps.hpp"

#include <cmath>
#include <utility>

// Element-operation counts are this file's modelling choices, stated where used.
namespace trnsim::workload::steps {
namespace {

// Per-expert weight gradient over R rows, batched over the local experts, with the accumulation
// buffer read and written in place when the software fuses it (wgrad in step_emitter.hpp).
Kernel expert_wgrad(const StepContext& c, const char* name, std::int64_t in, std::int64_t out, std::int64_t rows,
                    std::int64_t experts) {
  Kernel kr = matmul(name, OpClass::Matmul, in, out, rows, experts, c.act_bytes);
  if (c.kernels.fused_grad_accumulation) {
    kr.hbm_bytes += (2 * bytes(c.precision.grad_accumulation) - c.act_bytes) * dbl(in) * dbl(out) * dbl(experts);
  }
  return kr;
}

// Bytes of one all-to-all buffer: the rank's routed copies.
double dispatch_bytes(const StepContext& c) {
  const auto& d = c.d;
  return c.dispatch_factor * dbl(moe_local_tokens(c)) * dbl(d.experts_per_token) * dbl(d.hidden) * c.act_bytes;
}

// The routed copies of the whole TP group (what the TP all-gather produces): tp x the rank's.
double gathered_bytes(const StepContext& c) { return dbl(c.d.tp) * dispatch_bytes(c); }

void shared_forward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t f = d.shared_experts * d.expert_ffn;
  const std::int64_t t = c.tokens();
  em.enter_region();
  em.kernel(matmul("shared_fc1", OpClass::Matmul, t, fc1_width(d, f), d.hidden, 1, c.act_bytes));
  em.kernel(activation(c, dbl(t) * dbl(f), false));
  em.kernel(matmul("shared_fc2", OpClass::Matmul, t, d.hidden, f, 1, c.act_bytes));
  em.leave_region();
}

void shared_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t f = d.shared_experts * d.expert_ffn;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  em.leave_region_backward_deferring_input();
  em.kernel(matmul("shared_fc2_dgrad", OpClass::Matmul, t, f, d.hidden, 1, e));
  em.kernel(wgrad(c, "shared_fc2_wgrad", f, d.hidden, t, e));
  em.kernel(activation(c, dbl(t) * dbl(f), true));
  em.enter_region_backward(matmul("shared_fc1_dgrad", OpClass::Matmul, t, d.hidden, fc1_width(d, f), 1, e),
                           wgrad(c, "shared_fc1_wgrad", d.hidden, fc1_width(d, f), t, e));
}

// The figures both passes are sized by: the rank's tokens T_l, top-k, router logits T_l E and
// routed copies T_l k h (elements).
struct MoeSizes {
  std::int64_t tokens;
  double k, logits, copies;
};

MoeSizes moe_sizes(const StepContext& c) {
  const std::int64_t tl = moe_local_tokens(c);
  const double k = dbl(c.d.experts_per_token);
  return {tl, k, dbl(tl) * dbl(c.d.experts), dbl(tl) * k * dbl(c.d.hidden)};
}

}  // namespace

std::int64_t moe_local_tokens(const StepContext& c) {
  return c.sequence_parallel ? c.tokens() / c.d.tp : c.tokens();
}

std::int64_t expert_rows(const StepContext& c) {
  const auto& d = c.d;
  // The TP group's routed copies, T k, after the all-gather, over the local experts. The tiny
  // slack keeps an exact integer product from rounding up on a last-bit error.
  const double mean = dbl(c.tokens()) * dbl(d.experts_per_token) / dbl(d.local_experts());
  return static_cast<std::int64_t>(std::ceil(c.expert_load * mean * (1 - 1e-12)));
}

void moe_forward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const MoeSizes z = moe_sizes(c);
  const std::int64_t tl = z.tokens;
  const double e = c.act_bytes, k = z.k, logits = z.logits, copies = z.copies;
  if (d.shared_experts > 0) shared_forward(c, em);
  em.kernel(matmul("router", OpClass::Matmul, tl, d.experts, d.hidden, 1, e));
  // Softmax over the E logits (row max, subtract, sum, normalise: 3 vector ops and one exp) and
  // top-k as k passes of a row max; logits read in e, fp32 probabilities written.
  em.kernel(elementwise("router_topk", OpClass::Elementwise, (3 + k) * logits, logits, logits * (e + 4)));
  em.kernel(elementwise("moe_permute", OpClass::Elementwise, copies, 0, 2 * e * copies));
  em.expert_collective(dispatch_bytes(c));
  if (c.sequence_parallel) em.collective(CollectiveOp::AllGather, gathered_bytes(c));
  const std::int64_t rows = expert_rows(c);
  const std::int64_t local = d.local_experts();
  em.kernel(matmul("expert_fc1", OpClass::Matmul, rows, fc1_width(d, d.expert_ffn), d.hidden, local, e));
  em.kernel(activation(c, dbl(rows) * dbl(local) * dbl(d.expert_ffn), false));
  em.kernel(matmul("expert_fc2", OpClass::Matmul, rows, d.hidden, d.expert_ffn, local, e));
  if (c.sequence_parallel) em.collective(CollectiveOp::ReduceScatter, gathered_bytes(c));
  em.expert_collective(dispatch_bytes(c));
  // Each token's k outputs back in token order, scaled by their gate and summed: a multiply and
  // an add per copy; the k copies and the gates read, the sum written.
  em.kernel(elementwise("moe_combine", OpClass::Elementwise, 2 * copies, 0, e * (copies + dbl(tl) * dbl(d.hidden))));
}

void moe_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const MoeSizes z = moe_sizes(c);
  const std::int64_t tl = z.tokens;
  const double e = c.act_bytes, logits = z.logits, copies = z.copies;
  const std::int64_t rows = expert_rows(c);
  const std::int64_t local = d.local_experts();
  const std::int64_t f1 = fc1_width(d, d.expert_ffn);
  // Gradients of the k copies (gate x output gradient) and of the gates (a dot product per copy).
  em.kernel(elementwise("moe_combine_bwd", OpClass::Elementwise, 3 * copies, 0, e * (2 * copies + dbl(tl) * dbl(d.hidden))));
  em.expert_collective(dispatch_bytes(c));
  if (c.sequence_parallel) em.collective(CollectiveOp::AllGather, gathered_bytes(c));
  em.kernel(matmul("expert_fc2_dgrad", OpClass::Matmul, rows, d.expert_ffn, d.hidden, local, e));
  em.kernel(expert_wgrad(c, "expert_fc2_wgrad", d.expert_ffn, d.hidden, rows, local));
  em.kernel(activation(c, dbl(rows) * dbl(local) * dbl(d.expert_ffn), true));
  em.kernel(matmul("expert_fc1_dgrad", OpClass::Matmul, rows, d.hidden, f1, local, e));
  em.kernel(expert_wgrad(c, "expert_fc1_wgrad", d.hidden, f1, rows, local));
  if (c.sequence_parallel) em.collective(CollectiveOp::ReduceScatter, gathered_bytes(c));
  em.expert_collective(dispatch_bytes(c));
  // The k copies' gradients summed per token.
  em.kernel(elementwise("moe_permute_bwd", OpClass::Elementwise, copies, 0, e * (copies + dbl(tl) * dbl(d.hidden))));
  // Softmax and top-k backward: 3 vector ops per logit; then the router's dgrad and wgrad.
  em.kernel(elementwise("router_topk_bwd", OpClass::Elementwise, 3 * logits, 0, logits * (e + 8)));
  em.kernel(matmul("router_dgrad", OpClass::Matmul, tl, d.hidden, d.experts, 1, e));
  em.kernel(wgrad(c, "router_wgrad", d.hidden, d.experts, tl, e));
  if (d.shared_experts > 0) shared_backward(c, em);
}

}  // namespace trnsim::workload::steps
