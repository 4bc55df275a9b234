#include "mla_steps.hpp"

namespace trnsim::workload::steps {
namespace {

// RMSNorm of a latent of `width` over the micro-batch's T tokens (not sequence-sharded: the latent
// exists only inside the TP region). Forward as the layer norms' RMSNorm (step_emitter.hpp: 4
// vector ops per element, one rsqrt per token); backward 8 vector ops per element (twice the
// forward; no residual gradient to add), reading the input and the output gradient and writing the
// input gradient.
Kernel latent_norm(const StepContext& c, const char* name, std::int64_t width, bool backward) {
  const double t = dbl(c.tokens());
  const double n = t * dbl(width);
  const double e = c.act_bytes;
  if (!backward) return elementwise(name, OpClass::Norm, 4 * n, t, 2 * e * n);
  return elementwise(name, OpClass::Norm, 8 * n, t, 3 * e * n);
}

// Per-rank output widths of the two up-projections and of the KV down-projection.
std::int64_t q_up_width(const LayerDims& d) { return d.q_width(); }
std::int64_t kv_up_width(const LayerDims& d) { return d.heads * (d.head_dim - d.qk_rope + d.v_head_dim); }
std::int64_t kv_down_width(const LayerDims& d) { return d.kv_lora + d.qk_rope; }

// A latent's norm and its up-projection: what the forward runs after each down-projection, and
// all the op policy reruns of the projections.
void q_latent_up(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  em.kernel(latent_norm(c, "mla_q_norm", d.q_lora, false));
  em.kernel(matmul("mla_q_up", OpClass::Matmul, c.tokens(), q_up_width(d), d.q_lora, 1, c.act_bytes));
}
void kv_latent_up(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  em.kernel(latent_norm(c, "mla_kv_norm", d.kv_lora, false));
  em.kernel(matmul("mla_kv_up", OpClass::Matmul, c.tokens(), kv_up_width(d), d.kv_lora, 1, c.act_bytes));
}

}  // namespace

void mla_projections_forward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  em.kernel(matmul("mla_q_down", OpClass::Matmul, t, d.q_lora, d.hidden, 1, e));
  q_latent_up(c, em);
  em.kernel(matmul("mla_kv_down", OpClass::Matmul, t, kv_down_width(d), d.hidden, 1, e));
  kv_latent_up(c, em);
}

void mla_op_policy_recompute(const StepContext& c, Emitter& em) {
  q_latent_up(c, em);
  kv_latent_up(c, em);
}

void mla_projections_backward(const StepContext& c, Emitter& em) {
  const auto& d = c.d;
  const std::int64_t t = c.tokens();
  const double e = c.act_bytes;
  // dgrad: dX[T x in] = dY[T x out] W^T; wgrad: dW[in x out] = X^T dY.
  em.kernel(matmul("mla_kv_up_dgrad", OpClass::Matmul, t, d.kv_lora, kv_up_width(d), 1, e));
  em.kernel(wgrad(c, "mla_kv_up_wgrad", d.kv_lora, kv_up_width(d), t, e));
  em.kernel(latent_norm(c, "mla_kv_norm_bwd", d.kv_lora, true));
  em.kernel(matmul("mla_kv_down_dgrad", OpClass::Matmul, t, d.hidden, kv_down_width(d), 1, e));
  em.kernel(wgrad(c, "mla_kv_down_wgrad", d.hidden, kv_down_width(d), t, e));
  em.kernel(matmul("mla_q_up_dgrad", OpClass::Matmul, t, d.q_lora, q_up_width(d), 1, e));
  em.kernel(wgrad(c, "mla_q_up_wgrad", d.q_lora, q_up_width(d), t, e));
  em.kernel(latent_norm(c, "mla_q_norm_bwd", d.q_lora, true));
  em.kernel(matmul("mla_q_down_dgrad", OpClass::Matmul, t, d.hidden, d.q_lora, 1, e));
  em.enter_region_backward(wgrad(c, "mla_q_down_wgrad", d.hidden, d.q_lora, t, e));
}

}  // namespace trnsim::workload::steps
