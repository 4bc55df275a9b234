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
#include <cstdint>

#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

// One tensor-parallel rank's share of a transformer layer; all sizes in elements.
struct LayerDims {
  std::int64_t tp = 1;
  std::int64_t hidden = 0;
  std::int64_t head_dim = 0;
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
  std::int64_t q_width() const { return heads * head_dim; }
  std::int64_t kv_width() const { return kv_heads * head_dim; }
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
// Token (vocabulary-parallel) embedding rows of one rank, plus the learned position table.
double embedding_parameters(const LayerDims& d, std::int64_t positions, bool learned_positions);
// Whole-model trainable parameters; `positions` sizes the learned position table (seq_len when
// ModelSpec::max_positions is 0). ModelSpec::parameters() uses max_positions.
double parameter_count(const ModelSpec& model, std::int64_t positions);

}  // namespace trnsim::workload
