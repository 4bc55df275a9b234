// Prints the size, build time and dependency-check time of the llama2-70b step on 32 trn1.32xlarge
// (1,024 ranks: TP 32, PP 8, DP 4, global batch 1024, micro-batch 1), symmetric mode.
#include <chrono>
#include <cstdio>
#include <optional>

#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/step_graph_order.hpp"

using namespace trnsim::workload;

int main() {
  const ModelSpec m{.name = "llama2-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8,
                    .ffn_hidden = 28672, .vocab = 32000, .mlp = MlpKind::SwiGlu, .norm = NormKind::RmsNorm,
                    .source = "Touvron et al. 2023 (arXiv 2307.09288)"};
  // The plan this benchmark has always measured, every field set (no plan search here).
  const TrainingSpec t{.seq_len = 4096, .global_batch = 1024, .micro_batch = 1, .attention = std::nullopt};
  const ParallelismSpec p{.tp = 32, .pp = 8, .dp = 4, .sequence_parallel = true, .zero = 0,
                          .schedule = PipelineSchedule::OneFOneB, .virtual_stages = 1,
                          .recompute = Recompute::Selective, .fsdp_prefetch = std::nullopt};
  const BuildOptions o{.total_ranks = 1024, .ranks_per_instance = 32};
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const StepGraph g = build_step(m, t, p, trnsim::workload::SoftwareSpec{}, o);
    const auto built = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(built - start).count();
    const std::size_t ordered = check_acyclic(g).size();  // what replay::execute checks first
    const double c = std::chrono::duration<double>(std::chrono::steady_clock::now() - built).count();
    std::printf("build %.3f s: %zu tasks, %zu edges, %zu works, %zu collectives, %u calls, %zu simulated ranks; "
                "dependency order (Boost.Graph DFS) %.3f s over %zu tasks\n",
                s, g.tasks.size(), g.successors.size(), g.works.size(), g.collectives.size(), g.calls,
                g.simulated_ranks.size(), c, ordered);
  }
  return 0;
}
