// Closed-form sizes of a transformer from its shape.
#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

// Trainable parameters, counted as Megatron-LM / Hugging Face models hold them:
//   embeddings     V*h, plus max_positions*h for a learned position table
//   per layer      attention q,o 2*h^2 and k,v 2*h*kv_heads*head_dim;
//                  MLP 2*h*f (GELU) or 3*h*f (SwiGLU: gate, up, down), times `experts` for MoE,
//                  plus the router h*experts;
//                  two norms (LayerNorm weight+bias 2h, RMSNorm weight h);
//                  biases when `biases`: q,k,v,o outputs and the MLP's hidden and output widths
//   final norm     decoders after the last layer; encoders (BERT) after the embeddings instead
//   output head    V*h unless tied to the embeddings
// BERT's pooler and pre-training heads are not counted (they are not part of the encoder).
// Checked in tests/config against published sizes (Llama 2 7B 6.74B, GPT-3 174.6B, ...).
double ModelSpec::parameters() const {
  const double h = static_cast<double>(hidden);
  const double f = static_cast<double>(ffn_hidden);
  const double v = static_cast<double>(vocab);
  const double kv_width = static_cast<double>(kv_heads * head_dim());
  const double norm_params = norm == NormKind::LayerNorm ? 2 * h : h;

  double attention = 2 * h * h + 2 * h * kv_width;
  if (biases) attention += 2 * h + 2 * kv_width;

  const bool gated = mlp == MlpKind::SwiGlu;
  double expert_mlp = (gated ? 3 : 2) * h * f;
  if (biases) expert_mlp += (gated ? 2 : 1) * f + h;
  double mlp_total = expert_mlp;
  if (experts > 0) mlp_total = static_cast<double>(experts) * expert_mlp + h * static_cast<double>(experts);

  const double per_layer = attention + mlp_total + 2 * norm_params;

  double embeddings = v * h;
  if (learned_positions) embeddings += static_cast<double>(max_positions) * h;
  const double head = tied_embeddings ? 0 : v * h;
  return embeddings + static_cast<double>(layers) * per_layer + norm_params + head;
}

}  // namespace trnsim::workload
