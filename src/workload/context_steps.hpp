#pragma once
// The attention core of one layer under context parallelism (cp > 1): the rank holds s / cp
// tokens of each sequence (StepContext::seq_len is already the rank's share) and computes its
// queries against the keys and values of all cp parts, as cp blocks. Internal to the workload layer.
//
// Causal load balancing: the sequence is cut into 2 cp chunks of c = s / (2 cp) tokens and rank i
// holds chunks i and 2 cp - 1 - i. Against its own K/V the rank computes two causal diagonal
// c x c triangles and one full c x c square (its later chunk against its earlier one); against any
// other rank's K/V exactly two full c x c squares (the rest is masked). So every block is 2 c^2 =
// (s / cp)^2 / 2 score pairs, the work of a causal attention over the rank's s / cp tokens, and
// every rank does s^2 / (2 cp): the causal total s^2 / 2 split evenly. Each block is priced as that
// causal kernel (attention_steps.hpp at seq_len s / cp).
//
// Ring (CpAttention::Ring; Liu et al. 2023, "Ring Attention with Blockwise Transformers"; the
// load-balanced ring of Megatron-Core / TransformerEngine and TorchTitan's context_parallel):
// - forward: cp - 1 send-recvs to the ring neighbour of a K/V block, b (s / cp) (k_r + v_r) e bytes
//   (K and V of the rank's tokens, k_r, v_r its TP share of their widths: 2 kv_r under MHA);
//   transfer k+1 runs alongside the attention of block k, and block k+1 waits for both.
// - backward: per block, the flash backward with the block's probabilities rebuilt inside it (the
//   K/V block is only there during that step); K/V move around the ring as in the forward (cp - 1
//   transfers), and the dK, dV accumulator of each block travels with it, collecting every rank's
//   contribution: cp - 1 transfers alongside the next block, and one more after the last block that
//   brings the last accumulator home (exposed). So each backward transfer carries K, V of the next
//   block (b (s / cp) (k_r + v_r) e bytes) and dK, dV of the previous one, b (s / cp) (k_r + v_r)
//   x 4 bytes: the accumulators are fp32 whatever the training dtype (kRingGradientBytes), so a
//   bf16 model's dK, dV block is twice its K, V block.
// All-gather (CpAttention::AllGather): K and V all-gathered over the CP group (cp x the block
// bytes) alongside the rank's own block, then the other cp - 1 blocks; in the backward the same
// gather alongside the first block and a reduce-scatter of dK, dV (cp x the block bytes) after the
// last, exposed.
#include "step_emitter.hpp"

namespace trnsim::workload::steps {

// Bytes per element of the dK, dV accumulators the ring's backward passes around: 4 (fp32).
// A software fact of PyTorch's context parallelism, which TorchTitan's context_parallel runs
// (torch/distributed/tensor/experimental/_attention.py, _templated_ring_attention_backward:
// grad_key and grad_value are allocated as torch.float32, accumulated across the ring steps and
// rotated in that buffer; cast to the input dtype only at the end); assumed of every stack, since
// no preset states otherwise (TransformerEngine's ring attention for Megatron-Core is not checked).
inline constexpr double kRingGradientBytes = 4;
// K and V of the rank's s / cp tokens (per TP rank): one ring transfer's payload (forward).
double kv_block_bytes(const StepContext& c);
// dK and dV of the same tokens in the ring's fp32 accumulators (backward).
double grad_kv_block_bytes(const StepContext& c);
// Forward of the attention core (attention_forward at cp = 1).
void context_attention_forward(const StepContext& c, Emitter& em);
// Backward of the attention core with its rebuild inside each block (attention_rebuild and
// attention_backward at cp = 1 are the caller's).
void context_attention_backward(const StepContext& c, Emitter& em);

}  // namespace trnsim::workload::steps
