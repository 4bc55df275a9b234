#include "trnsim/workload/flops.hpp"

#include "trnsim/workload/model_math.hpp"

namespace trnsim::workload {

double model_flops_per_step(const ModelSpec& model, const TrainingSpec& training) {
  const auto s = static_cast<double>(training.seq_len);
  const auto h = static_cast<double>(model.hidden);
  const LayerDims d = layer_dims(model, 1);
  // The attention's projections (MHA: h (q + 2 kv) + q h; MLA: its five matrices) and its core,
  // Q K^T over the query/key head width and P V over the value head width, counted dense.
  const double projections = attention_projection_parameters(d);
  const double core = 2 * s * s * static_cast<double>(d.heads) * static_cast<double>(d.head_dim + d.v_head_dim);
  const auto f = static_cast<double>(model.ffn_hidden);
  const double mlp = model.mlp == MlpKind::SwiGlu ? 3 : 2;
  const double layer = 2 * s * (projections + mlp * h * f) + core;
  const double head = 2 * s * h * static_cast<double>(model.vocab);
  double layers = static_cast<double>(model.layers) * layer;
  if (model.is_moe()) {
    // Active FLOPs: a MoE layer runs its router and, per token, top-k routed plus the shared experts.
    const auto fe = static_cast<double>(model.expert_width());
    const auto active = static_cast<double>(model.experts_per_token + model.shared_experts);
    const double moe_layer = layer + 2 * s * (active * mlp * h * fe + h * static_cast<double>(model.experts) - mlp * h * f);
    const auto dense = static_cast<double>(model.dense_layers);
    layers = dense * layer + (static_cast<double>(model.layers) - dense) * moe_layer;
  }
  const double per_sequence = 3 * (layers + head);
  return per_sequence * static_cast<double>(training.global_batch);
}

std::vector<double> simulated_rank_flops(const StepGraph& graph) {
  std::vector<double> out(graph.simulated_ranks.size(), 0.0);
  // Each work's FLOPs summed once (kernel by kernel, as per task before: the same doubles).
  std::vector<double> work_flops(graph.works.size(), 0.0);
  for (std::size_t w = 0; w < graph.works.size(); ++w) {
    for (const auto& k : graph.works[w].kernels) work_flops[w] += k.executed_flops();
  }
  for (const Task& t : graph.tasks) {
    if (t.kind != TaskKind::Compute) continue;
    const std::size_t at = graph.rank_slot(t.rank);  // an unsimulated rank is reported before a bad index
    out[at] += work_flops.at(t.index);
  }
  return out;
}

double hardware_flops_per_step(const StepGraph& graph) {
  if (graph.simulated_ranks.empty()) return 0;
  double sum = 0;
  for (double f : simulated_rank_flops(graph)) sum += f;
  return sum * static_cast<double>(graph.total_ranks) / static_cast<double>(graph.simulated_ranks.size());
}

}  // namespace trnsim::workload
