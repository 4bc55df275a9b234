#include "trnsim/workload/model_math.hpp"

#include <algorithm>

namespace trnsim::workload {

LayerDims layer_dims(const ModelSpec& model, std::int64_t tp, std::int64_t ep) {
  LayerDims d;
  d.tp = tp;
  d.hidden = model.hidden;
  d.head_dim = model.head_dim();
  d.v_head_dim = model.v_head_dim();
  d.heads = model.heads / tp;
  const std::int64_t kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  d.kv_heads = std::max<std::int64_t>(1, kv / tp);
  d.ffn = model.ffn_hidden / tp;
  d.vocab = (model.vocab + tp - 1) / tp;
  d.swiglu = model.mlp == MlpKind::SwiGlu;
  d.rmsnorm = model.norm == NormKind::RmsNorm;
  d.biases = model.biases;
  d.experts = model.experts;
  d.experts_per_token = model.experts_per_token;
  d.expert_ffn = model.expert_width() / tp;
  d.shared_experts = model.shared_experts;
  d.dense_layers = model.experts > 0 ? model.dense_layers : 0;
  d.ep = ep;
  d.dropout = model.norm == NormKind::LayerNorm;
  d.causal = model.arch == ModelArch::Decoder;
  d.rotary = !model.learned_positions;
  if (model.is_mla()) {
    d.mla = true;
    d.q_lora = model.attention.q_lora_rank;
    d.kv_lora = model.attention.kv_lora_rank;
    d.qk_rope = model.attention.qk_rope_head_dim;
  }
  return d;
}

double norm_parameters(const LayerDims& d) {
  // LayerNorm: gain and bias; RMSNorm: gain only.
  return static_cast<double>(d.hidden) * (d.rmsnorm ? 1 : 2);
}

namespace {

// A gated (SwiGLU: gate, up, down) or plain (fc1, fc2) MLP of width f on this rank.
double mlp_parameters(const LayerDims& d, double f) {
  const auto h = static_cast<double>(d.hidden);
  double p = (d.swiglu ? 3 : 2) * h * f;  // gate+up (column-parallel) and down (row-parallel)
  if (d.biases) p += (d.swiglu ? 2 : 1) * f + h;
  return p;
}

}  // namespace

double attention_projection_parameters(const LayerDims& d) {
  const auto h = static_cast<double>(d.hidden);
  const auto q = static_cast<double>(d.q_width());
  const auto o = static_cast<double>(d.o_width());
  if (!d.mla) {
    // QKV (column-parallel) and output (row-parallel).
    return h * (q + static_cast<double>(d.k_width() + d.v_width())) + o * h;
  }
  const auto ql = static_cast<double>(d.q_lora);
  const auto kvl = static_cast<double>(d.kv_lora);
  // W_dq, W_uq, W_dkv (latent and shared rotary key), W_ukv (each head's K_nope and V), W_o.
  const auto nope = static_cast<double>(d.head_dim - d.qk_rope);
  return h * ql + ql * q + h * (kvl + static_cast<double>(d.qk_rope)) +
         kvl * static_cast<double>(d.heads) * (nope + static_cast<double>(d.v_head_dim)) + o * h;
}

LayerParameters layer_parameters(const LayerDims& d, std::int64_t layer) {
  const auto h = static_cast<double>(d.hidden);
  double attention = attention_projection_parameters(d);
  // QKV and output biases (row-parallel: replicated); MLA has none (check_model).
  if (d.biases) attention += static_cast<double>(d.q_width() + d.k_width() + d.v_width()) + h;
  // MLA's latent norms (RMSNorm gains), replicated.
  if (d.mla) attention += static_cast<double>(d.q_lora + d.kv_lora);
  LayerParameters p;
  p.dense = attention + 2 * norm_parameters(d);
  if (!d.moe_layer(layer)) {
    p.dense += mlp_parameters(d, static_cast<double>(d.ffn));
    return p;
  }
  // Mixture of experts: the router (h x experts, replicated over TP), the shared experts (split
  // over TP like a dense MLP) and this rank's routed experts, each a whole MLP split over TP.
  const double expert = mlp_parameters(d, static_cast<double>(d.expert_ffn));
  p.dense += h * static_cast<double>(d.experts) + static_cast<double>(d.shared_experts) * expert;
  p.experts = static_cast<double>(d.local_experts()) * expert;
  return p;
}

LayerParameters layers_parameters(const LayerDims& d, std::int64_t first, std::int64_t count) {
  LayerParameters sum;
  // A run of identical layers: the dense prefix and the MoE rest, each counted once.
  const std::int64_t dense = std::clamp<std::int64_t>(d.dense_layers - first, 0, count);
  if (dense > 0) {
    const LayerParameters one = layer_parameters(d, first);
    sum.dense += static_cast<double>(dense) * one.dense;
    sum.experts += static_cast<double>(dense) * one.experts;
  }
  if (count > dense) {
    const LayerParameters one = layer_parameters(d, first + dense);
    sum.dense += static_cast<double>(count - dense) * one.dense;
    sum.experts += static_cast<double>(count - dense) * one.experts;
  }
  return sum;
}

double embedding_parameters(const LayerDims& d, std::int64_t positions, bool learned_positions) {
  const auto h = static_cast<double>(d.hidden);
  return static_cast<double>(d.vocab) * h + (learned_positions ? static_cast<double>(positions) * h : 0.0);
}

double parameter_count(const ModelSpec& model, std::int64_t positions) {
  const LayerDims d = layer_dims(model, 1);
  double p = layers_parameters(d, 0, model.layers).total();
  p += embedding_parameters(d, positions, model.learned_positions);
  p += norm_parameters(d);  // final norm
  if (!model.tied_embeddings) p += static_cast<double>(d.vocab) * static_cast<double>(d.hidden);
  return p;
}

double ModelSpec::parameters() const { return parameter_count(*this, max_positions); }

}  // namespace trnsim::workload
