#pragma once
// The MLP block of a mixture-of-experts layer (ModelSpec::experts > 0, layers from dense_layers on)
// for one micro-batch on one rank, forward and backward. Internal to the workload layer.
//
// With T tokens per micro-batch, T_l = T / tp the rank's tokens (sequence-parallel shard; T at
// tp = 1), k = experts_per_token, E experts, ep expert-parallel ranks, h hidden, f the expert
// width per TP rank, e the activation element size, forward:
//   router      logits [T_l x E] = X W_r (a GEMM), softmax and top-k over E
//   permute     each token's k copies gathered in expert order (T_l k h elements)
//   dispatch    all-to-all on the EP group, T_l k h e bytes per rank (net's all-to-all: each rank
//               keeps 1/ep and sends (ep-1)/ep of it)
//   gather      all-gather over TP of the routed tokens, T k h e (expert tensor parallelism = tp,
//               as Megatron-Core's all-to-all token dispatcher does it after the EP all-to-all)
//   experts     E / ep local experts, each a GEMM group on R = load x T k ep / E rows (rounded
//               up): on average every expert receives k T / E of each rank's tokens
//   scatter     reduce-scatter over TP (the row-parallel second GEMM), T k h e
//   combine     all-to-all on the EP group back to the tokens' ranks, T_l k h e
//   weighted sum of each token's k expert outputs
//   shared      shared experts: a dense MLP of width shared x f on every token, TP-split like one
// `load` (StepContext::expert_load) is the simulated rank's routed load over the mean: the
// imbalance (the busiest expert over the mean; the whole local load carries it, exact with one
// expert per rank and an upper bound otherwise) limited by the capacity factor when tokens
// beyond it are dropped, the capacity factor itself when experts are padded to it.
// Sequence parallelism is required with tp > 1 (check_plan), so T_l = T / tp.
// Backward mirrors it: the combine's and scatter's backward are the dispatch's collectives and
// the reverse, each expert GEMM has its dgrad and its wgrad (per expert: f x h over R rows).
#include "step_emitter.hpp"

namespace trnsim::workload::steps {

void moe_forward(const StepContext& c, Emitter& em);
void moe_backward(const StepContext& c, Emitter& em);

// Routed rows per local expert on this rank (R above), and the tokens of the rank (T_l).
std::int64_t expert_rows(const StepContext& c);
std::int64_t moe_local_tokens(const StepContext& c);

}  // namespace trnsim::workload::steps
