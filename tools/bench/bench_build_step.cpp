// Prints the size, build time and dependency-check time of the llama2-70b step on 32 trn1.32xlarge
// (1,024 ranks: TP 32, PP 8, DP 4, global batch 1024, micro-batch 1), symmetric mode.
#include <chrono>
#include <cstdio>

#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/step_graph_order.hpp"

using namespace trnsim::workload;

int main() {
  ModelSpec m;
  m.name = "llama2-70b";
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.vocab = 32000;
  m.mlp = MlpKind::SwiGlu;
  m.norm = NormKind::RmsNorm;
  TrainingSpec t;
  t.seq_len = 4096;
  t.global_batch = 1024;
  ParallelismSpec p;
  p.tp = 32;
  p.pp = 8;
  p.dp = 4;
  // The plan this benchmark has always measured, every field set (no plan search here).
  t.micro_batch = 1;
  p.sequence_parallel = true;
  p.zero = 0;
  p.virtual_stages = 1;
  p.schedule = PipelineSchedule::OneFOneB;
  p.recompute = Recompute::Selective;
  BuildOptions o;
  o.total_ranks = 1024;
  o.ranks_per_instance = 32;
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
