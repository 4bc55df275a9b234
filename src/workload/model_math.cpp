#include "trnsim/workload/model_math.hpp"

#include <algorithm>

namespace trnsim::workload {

LayerDims layer_dims(const ModelSpec& model, std::int64_t tp) {
  LayerDims d;
  d.tp = tp;
  d.hidden = model.hidden;
  d.head_dim = model.head_dim();
  d.heads = model.heads / tp;
  const std::int64_t kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  d.kv_heads = std::max<std::int64_t>(1, kv / tp);
  d.ffn = model.ffn_hidden / tp;
  d.vocab = (model.vocab + tp - 1) / tp;
  d.swiglu = model.mlp == MlpKind::SwiGlu;
  d.rmsnorm = model.norm == NormKind::RmsNorm;
  d.biases = model.biases;
  d.experts = model.experts;
  d.dropout = model.norm == NormKind::LayerNorm;
  d.causal = model.arch == ModelArch::Decoder;
  d.rotary = !model.learned_positions;
  return d;
}

double norm_parameters(const LayerDims& d) {
  // LayerNorm: gain and bias; RMSNorm: gain only.
  return static_cast<double>(d.hidden) * (d.rmsnorm ? 1 : 2);
}

double layer_parameters(const LayerDims& d) {
  const auto h = static_cast<double>(d.hidden);
  const auto q = static_cast<double>(d.q_width());
  const auto kv = static_cast<double>(d.kv_width());
  const auto f = static_cast<double>(d.ffn);
  double p = h * (q + 2 * kv) + q * h;  // QKV (column-parallel) and output (row-parallel)
  double mlp = (d.swiglu ? 3 : 2) * h * f;  // gate+up (column-parallel) and down (row-parallel)
  if (d.biases) {
    p += (q + 2 * kv) + h;                   // QKV and output biases (row-parallel: replicated)
    mlp += (d.swiglu ? 2 : 1) * f + h;
  }
  // Mixture of experts: every expert holds a whole MLP, plus the router (h x experts).
  if (d.experts > 0) mlp = static_cast<double>(d.experts) * mlp + h * static_cast<double>(d.experts);
  return p + mlp + 2 * norm_parameters(d);
}

double embedding_parameters(const LayerDims& d, std::int64_t positions, bool learned_positions) {
  const auto h = static_cast<double>(d.hidden);
  return static_cast<double>(d.vocab) * h + (learned_positions ? static_cast<double>(positions) * h : 0.0);
}

double parameter_count(const ModelSpec& model, std::int64_t positions) {
  const LayerDims d = layer_dims(model, 1);
  double p = static_cast<double>(model.layers) * layer_parameters(d);
  p += embedding_parameters(d, positions, model.learned_positions);
  p += norm_parameters(d);  // final norm
  if (!model.tied_embeddings) p += static_cast<double>(d.vocab) * static_cast<double>(d.hidden);
  return p;
}

double ModelSpec::parameters() const { return parameter_count(*this, max_positions); }

}  // namespace trnsim::workload
