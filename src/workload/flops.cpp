#include "trnsim/workload/flops.hpp"

namespace trnsim::workload {

double model_flops_per_step(const ModelSpec& model, const TrainingSpec& training) {
  const auto s = static_cast<double>(training.seq_len);
  const auto h = static_cast<double>(model.hidden);
  const auto q = h;  // heads * head_dim
  const auto kv = static_cast<double>(model.kv_heads > 0 ? model.kv_heads : model.heads) *
                  static_cast<double>(model.head_dim());
  const auto f = static_cast<double>(model.ffn_hidden);
  const double mlp = model.mlp == MlpKind::SwiGlu ? 3 : 2;
  const double layer = 2 * s * (h * (q + 2 * kv) + q * h + mlp * h * f) + 4 * s * s * q;
  const double head = 2 * s * h * static_cast<double>(model.vocab);
  const double per_sequence = 3 * (static_cast<double>(model.layers) * layer + head);
  return per_sequence * static_cast<double>(training.global_batch);
}

std::vector<double> simulated_rank_flops(const StepGraph& graph) {
  std::vector<double> out(graph.simulated_ranks.size(), 0.0);
  for (const Task& t : graph.tasks) {
    if (t.kind != TaskKind::Compute) continue;
    const std::size_t slot = graph.rank_slot(t.rank);
    double f = 0;
    for (const auto& k : graph.works.at(t.index).kernels) f += k.flops;
    out[slot] += f;
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
