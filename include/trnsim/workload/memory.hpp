#pragma once
// Memory per rank, per pipeline stage (every rank of a stage holds the same). Bytes throughout.
//
// Model state: parameters p of the stage's TP shard (the stage's layers: L/pp, or a layer
// fewer or more under the uneven split of plan.hpp; plus the vocabulary-parallel
// embedding on the first stage and final norm + LM head on the last; a tied head on a separate
// last stage holds its own copy, as in Megatron-LM). With the software's precision recipe
// (workload/software.hpp): weights = p * weights, gradients = p * grad_accumulation (the buffer
// they accumulate in over the step), optimizer = p * (master_weights + moments *
// optimizer_states) / (dp under ZeRO-1, else 1); for bf16 Adam with fp32 accumulation that is
// 2 + 4 + 12 bytes per parameter (the ZeRO paper's 16 counts 2-byte gradients).
//
// Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", generalised): with T = b s tokens, e the activation
// element size, t = tp, sigma = 1/t under sequence parallelism else 1, masks 1 byte:
//   kept  = sigma (2 e T h [two norm inputs] + e T h [QKV input] + e T h [fc1 input]
//                  + 2 T h [dropout masks, LayerNorm models only])
//         + e T q_r [Q] + 2 e T kv_r [K, V] + e T q_r [attention output]
//           (under MLA: e T (q_r + k_r + v_r + o_r) for Q, K, V and the output, plus
//           e T (2 r_q + 2 r_kv + d_rope) [the two latents before and after their norms, and the
//           shared rotary key]; model_math.hpp)
//         + e T f_r (2 for GELU: fc1 output, GELU output; 3 for SwiGLU: gate+up, product)
//   none adds the attention probabilities: b a_r s^2 (e [softmax] + 1 [mask] + e [dropout out]),
//        (e only without dropout)
//   selective: kept;  full: sigma e T h (the layer input only)
//   selective-op (TorchTitan's per-operator policy, specs.hpp; the outputs it keeps):
//         sigma e T h [the layer input] + e T q_r [q] + e T kv_r [v] + e T q_r [attention output]
//         + e T f_r [the gate, or fc1 under GELU] + e T h [the down projection, SwiGLU only: the
//         7th matmul, an odd one; under GELU fc2 is the 6th] + 2 sigma e T h [the two TP
//         reduce-scatters' outputs, SP with tp > 1 only]; nothing of size s^2 (the probabilities
//         are rebuilt). A MoE layer: the attention half (layer input, q, v, attention output, one
//         reduce-scatter) plus its expert block as under selective (not rerun, layer_steps.cpp).
//   full-every-n: each layer under its own mode (Plan::layer_mode): full on every n-th layer of
//         the rank, none on the others.
// For GPT (q = kv = h, f = 4h, dropout, e = 2) this is sbh (10 + 24/t + 5 a s/(h t)) without SP
// and sbh/t (34 + 5 a s / h) with SP: the paper's equations.
// A stage holds the activations of its peak number of units in flight under the schedule, each
// unit weighted by its chunk's layers (peak_weight_in_flight; = peak units x layers per chunk when
// the split is even); full recompute (and full-every-n) adds one layer's kept
// activations (the layer being recomputed).
// Embedding/logits buffers: the first stage's embedding output (sigma e T h) per unit in flight;
// the last stage's final-norm input (sigma e T h) and logits plus fp32 softmax (T V_r (e + 4))
// per head unit in flight.
// Mixture-of-experts layers (workload/moe_steps.hpp; T_l = sigma T the rank's tokens, R = load T k
// the routed rows it holds after the TP all-gather, f_r the expert width per rank, m 2 or 3 as
// above): the MLP's part sigma e T h + e T f_r m is replaced by
//   sigma e T h [router input] + 4 T_l E [fp32 router probabilities] + e R h [expert input]
//   + m e R f_r [expert intermediates] + e T_l k h [expert outputs, for the gates' gradient]
//   + shared experts as a dense MLP of width shared x f_r;
// a chunk's layers are weighed by their kind (a MoE layer counts its bytes over a dense one's).
// Routed experts' weights, gradients and optimizer states: experts / ep of them per rank;
// under ZeRO-1 their optimizer states are sharded over their data-parallel group, dp / ep.
// ZeRO-2 and -3: with p = p_d + p_x (dense and routed experts' parameters of the stage) and g =
// dp / ep the experts' data-parallel group (build_step.cpp: their gathers and reduce-scatters run
// on it), the shard s = p_d / dp + p_x / g; gradients = s x grad_accumulation + (u + root) x
// gradients, optimizer = s x (master + moments x states), with u the stage's largest layer (its
// dense and local expert parameters) and root its embedding / final norm / head; ZeRO-3 (FSDP)
// also weights = (s + root + (k + 1) u) x weights: the root held through a pass and k + 1 layers
// gathered at once under k layers of prefetch (SoftwareSpec::fsdp_prefetch_units; at most the
// stage's layers). At ep = 1, g = dp and s = p / dp.
// Workspace: one layer's kept activations (backward gradient buffers) plus the largest TP
// collective buffer (2 e T h: the SP backward's double all-gather).
// Context parallelism (cp > 1): T above is the rank's b s / cp tokens, so activations, logits and
// workspace divide by cp (materialized attention keeps its cp blocks of (s / cp)^2 scores); the
// ZeRO and FSDP shards divide by dp x cp (Plan::grad_dp). The workspace adds the K/V in flight:
// ring attention the block being used and the one arriving, each K and V (4 e T kv_r), and in the
// backward their dK, dV in fp32 (4 x 4 T kv_r more: context_steps.hpp); all-gather the
// sequence's K and V (2 e cp T kv_r) and in the backward their gradients before the
// reduce-scatter (the same again).
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/hw/specs.hpp"

#include "trnsim/workload/model_math.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/software.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

struct StageMemory {
  std::int64_t stage = 0;
  double parameters = 0;  // count, one rank's shard
  double expert_parameters = 0;  // of parameters, routed experts' (their DP group is dp / ep)
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, embedding_logits = 0, workspace = 0;
  std::int64_t units_in_flight = 0;  // micro-batch x chunk units whose activations are held at peak
  double total() const { return weights + gradients + optimizer + activations + embedding_logits + workspace; }
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;  // index = pipeline stage
  // The stage with the largest total (first on ties).
  const StageMemory& peak() const;
};

// Parameters of one rank of `stage` (count): dense (embedding and head included) and routed experts'.
LayerParameters stage_parameters(const ModelSpec& model, const Plan& plan, std::int64_t positions,
                                 std::int64_t stage);
// Activation bytes of one dense layer for one micro-batch on one rank under `mode`, the layer's
// own mode (Plan::layer_mode; a full-every-n mode given here counts as full).
double layer_activation_bytes(const ModelSpec& model, const Plan& plan, const TrainingSpec& training,
                              Recompute mode);
// The same for a mixture-of-experts layer whose rank carries `expert_load` x the mean routed load.
double moe_layer_activation_bytes(const ModelSpec& model, const Plan& plan, const TrainingSpec& training,
                                  Recompute mode, double expert_load);
// Contract: every optional resolved (else InputError naming it); the caller compares with the
// rank's HBM share. O(pp * micro_batches).
MemoryEstimate estimate_memory(const ModelSpec& model, const TrainingSpec& training,
                               const ParallelismSpec& parallelism, const SoftwareSpec& software);

// HBM one rank may use: the chip's HBM shared by its cores (bytes).
double rank_memory_capacity(const hw::ChipSpec& chip, int physical_cores_per_rank);

// One finding per stage whose total exceeds `capacity` bytes, with the breakdown in GiB
// ("stage 0 needs 18.2 GiB of 16.0 GiB: weights 2.0, gradients 2.0, ..."). Empty when all fit.
std::vector<std::string> memory_findings(const MemoryEstimate& estimate, double capacity);

}  // namespace trnsim::workload
