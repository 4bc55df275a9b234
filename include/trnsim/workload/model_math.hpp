#pragma once
// Shapes and parameter counts of the transformer models, whole and per tensor-parallel rank.
//
// Conventions (documented rules, one for every model):
// - Biases on every projection when ModelSpec::biases (GPT, BERT); LayerNorm models also have
//   dropout after attention and MLP (Megatron-LM's GPT layer); Llama has neither.
// - Grouped-query attention under tensor parallelism: K/V heads are split over TP ranks when
//   kv_heads >= tp, otherwise replicated so that every rank holds one (NeuronX Distributed, Megatron).
// - The vocabulary is split over TP ranks (vocabulary-parallel embedding and LM head), padded up
//   to a multiple of tp.
// - Encoders (BERT) are the same layer without the causal mask; their output head is the same
//   vocabulary projection (masked-LM), the pooler is not modelled.
// - Multi-head latent attention (ModelSpec::attention, DeepSeek-V2/-V3, arXiv 2405.04434 section
//   2.1 and 2412.19437 section 2.1.1): per token, c_q = RMSNorm(x W_dq) [h -> q_lora_rank],
//   Q = c_q W_uq [-> heads x (qk_nope + qk_rope)]; [c_kv, k_rope] = x W_dkv [h -> kv_lora_rank +
//   qk_rope], K_nope, V = RMSNorm(c_kv) W_ukv [-> heads x (qk_nope + v_head)], each head's key is
//   K_nope with the shared k_rope appended; O [heads x v_head] W_o -> h. No biases.
//   Under TP the up-projections split by heads (column-parallel) and W_o by its input (row-
//   parallel), as Megatron-Core's MLASelfAttention does; the down-projections W_dq, W_dkv and the
//   two latent norms are replicated on every TP rank and computed there on the full tokens of the
//   micro-batch (assumption: Megatron-Core keeps them unsplit, and DeepSeek's own code does not
//   split them either). Their weight gradients are then partial sums over the TP ranks, all-reduced
//   over TP once per step before the optimizer, as Megatron-Core does (build_step.cpp): one call of
//   (h (q_lora + kv_lora + qk_rope) + q_lora + kv_lora) x gradient bytes per layer of the stage.
#include <cstdint>

#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

// One tensor-parallel rank's share of a transformer layer; all sizes in elements.
struct LayerDims {
  std::int64_t tp = 1;
  std::int64_t hidden = 0;
  std::int64_t head_dim = 0;      // a head's query and key width
  std::int64_t v_head_dim = 0;    // a head's value width (= head_dim but under MLA)
  std::int64_t heads = 0;         // query heads on this rank
  std::int64_t kv_heads = 0;      // key/value heads on this rank (replicated when kv < tp)
  std::int64_t ffn = 0;           // MLP intermediate width on this rank
  std::int64_t vocab = 0;         // vocabulary rows on this rank (padded)
  bool swiglu = false;
  bool rmsnorm = false;
  bool biases = false;            // ModelSpec::biases
  std::int64_t experts = 0;       // MoE experts per MLP (0: dense)
  std::int64_t experts_per_token = 0;  // top-k
  std::int64_t expert_ffn = 0;    // one routed or shared expert's MLP width on this rank (/ tp)
  std::int64_t shared_experts = 0;
  std::int64_t dense_layers = 0;  // the first layers with a dense MLP of width ffn
  std::int64_t ep = 1;            // expert-parallel ranks: this rank holds experts / ep experts
  bool dropout = false;
  bool causal = true;
  bool rotary = false;
  // Multi-head latent attention (0 under MHA): the latent widths and the rotary part of a head.
  bool mla = false;
  std::int64_t q_lora = 0;
  std::int64_t kv_lora = 0;
  std::int64_t qk_rope = 0;
  std::int64_t q_width() const { return heads * head_dim; }     // Q
  std::int64_t k_width() const { return kv_heads * head_dim; }  // K
  std::int64_t v_width() const { return kv_heads * v_head_dim; }  // V
  std::int64_t o_width() const { return heads * v_head_dim; }   // attention output (W_o's input)
  // Elements per token the rotary embedding rotates: Q and K whole under MHA; under MLA each
  // head's rotary query part and the one shared rotary key.
  std::int64_t rope_width() const { return mla ? heads * qk_rope + qk_rope : q_width() + k_width(); }
  bool moe_layer(std::int64_t layer) const { return experts > 0 && layer >= dense_layers; }
  std::int64_t local_experts() const { return experts / ep; }
};

// Contract: the caller has validated divisibility (check_plan); tp >= 1, ep >= 1.
LayerDims layer_dims(const ModelSpec& model, std::int64_t tp, std::int64_t ep = 1);

// One rank's parameters of layer `layer`: `dense` are replicated over the whole data-parallel
// group (attention, norms, a dense MLP; in a MoE layer the router and the shared experts);
// `experts` the routed experts this rank holds (experts / ep of them, each split over TP), whose
// data-parallel group is the dp / ep ranks with the same EP coordinate. Replicated norms and
// biases counted in full.
struct LayerParameters {
  double dense = 0, experts = 0;
  double total() const { return dense + experts; }
};
LayerParameters layer_parameters(const LayerDims& d, std::int64_t layer);
// The parameters of every layer of the model chunk [first, first + count) on one rank.
LayerParameters layers_parameters(const LayerDims& d, std::int64_t first, std::int64_t count);
// Parameters of the norm(s) of one layer or of the final norm, per rank (always replicated).
double norm_parameters(const LayerDims& d);
// Weights of one rank's attention projections, without biases and norms: MHA's QKV and output;
// MLA's five matrices (the replicated down-projections in full). 2 x this per token is their FLOPs.
double attention_projection_parameters(const LayerDims& d);
// Token (vocabulary-parallel) embedding rows of one rank, plus the learned position table.
double embedding_parameters(const LayerDims& d, std::int64_t positions, bool learned_positions);
// Whole-model trainable parameters; `positions` sizes the learned position table (seq_len when
// ModelSpec::max_positions is 0). ModelSpec::parameters() uses max_positions.
double parameter_count(const ModelSpec& model, std::int64_t positions);

}  // namespace trnsim::workload
