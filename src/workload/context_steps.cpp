#include "context_steps.hpp"

#include "attention_steps.hpp"

namespace trnsim::workload::steps {
double kv_block_bytes(const StepContext& c) {
  return dbl(c.tokens()) * dbl(c.d.k_width() + c.d.v_width()) * c.act_bytes;
}

double grad_kv_block_bytes(const StepContext& c) {
  return dbl(c.tokens()) * dbl(c.d.k_width() + c.d.v_width()) * kRingGradientBytes;
}

void context_attention_forward(const StepContext& c, Emitter& em) {
  const double block = kv_block_bytes(c);
  if (c.cp_attention == CpAttention::AllGather) {
    em.context_collective(CollectiveOp::AllGather, dbl(c.cp) * block, true);
    attention_forward(c, em);
    em.cut();
    for (std::int64_t k = 1; k < c.cp; ++k) attention_forward(c, em);
    return;
  }
  for (std::int64_t k = 0; k < c.cp; ++k) {
    if (k + 1 < c.cp) em.context_collective(CollectiveOp::SendRecv, block, true);
    attention_forward(c, em);
    em.cut();
  }
}

void context_attention_backward(const StepContext& c, Emitter& em) {
  const double block = kv_block_bytes(c);
  auto block_backward = [&] {
    if (rebuilds_attention(c)) attention_rebuild(c, em);
    attention_backward(c, em);
  };
  if (c.cp_attention == CpAttention::AllGather) {
    em.context_collective(CollectiveOp::AllGather, dbl(c.cp) * block, true);
    block_backward();
    em.cut();
    for (std::int64_t k = 1; k < c.cp; ++k) block_backward();
    em.context_collective(CollectiveOp::ReduceScatter, dbl(c.cp) * block, false);
    return;
  }
  const double grad = grad_kv_block_bytes(c);
  for (std::int64_t k = 0; k < c.cp; ++k) {
    // K, V of block k + 1 (not after the last) and dK, dV of block k - 1 (not before the first).
    const double bytes = (k + 1 < c.cp ? block : 0) + (k > 0 ? grad : 0);
    em.context_collective(CollectiveOp::SendRecv, bytes, true);
    block_backward();
    em.cut();
  }
  em.context_collective(CollectiveOp::SendRecv, grad, false);
}

}  // namespace trnsim::workload::steps
