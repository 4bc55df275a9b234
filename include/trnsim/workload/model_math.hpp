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
  bool dropout = false;
  bool causal = true;
  bool rotary = false;
  std::int64_t q_width() const { return heads * head_dim; }
  std::int64_t kv_width() const { return kv_heads * head_dim; }
};

// Contract: the caller has validated divisibility (validate_plan); tp >= 1.
LayerDims layer_dims(const ModelSpec& model, std::int64_t tp);

// Parameters of one TP rank's share of a layer (replicated norms and biases counted in full).
double layer_parameters(const LayerDims& d);
// Parameters of the norm(s) of one layer or of the final norm, per rank (always replicated).
double norm_parameters(const LayerDims& d);
// Token (vocabulary-parallel) embedding rows of one rank, plus the learned position table.
double embedding_parameters(const LayerDims& d, std::int64_t positions, bool learned_positions);
// Whole-model trainable parameters; `positions` sizes the learned position table (seq_len when
// ModelSpec::max_positions is 0). ModelSpec::parameters() uses max_positions.
double parameter_count(const ModelSpec& model, std::int64_t positions);

}  // namespace trnsim::workload
