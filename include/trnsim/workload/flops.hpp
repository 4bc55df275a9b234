#pragma once
// FLOP accounting for MFU and HFU.
//
// Model FLOPs per step (the MFU numerator, independent of parallelism and recompute): forward
// matmul FLOPs over the global batch times 3 (backward = 2 x forward), attention counted dense
// (full s x s, as Megatron-LM and PaLM count it), LM head included, embedding lookups free:
//   per sequence: 3 [ L (2 s (h (q + 2 kv) + q h + m h f) + 4 s^2 q) + 2 s h V ],
//   q = heads * head_dim, kv = kv_heads * head_dim, m = 2 (GELU) or 3 (SwiGLU).
// Multi-head latent attention puts its five projections (workload/model_math.hpp) in place of
// h (q + 2 kv) + q h, and its core is 2 s^2 heads (d_qk + d_v) (query/key and value head widths)
// in place of 4 s^2 q.
// i.e. 6 x (matmul parameters) x tokens + attention. A mixture-of-experts layer counts its active
// FLOPs: the router (h x E) and k routed plus the shared experts of width f_e in place of m h f. For GPT (kv = q = h, f = 4h) this is
// 72 B s L h^2 (1 + s/(6h) + V/(12 L h)); Megatron-LM's 96 B s L h^2 (...) counts full recompute.
// MFU = model FLOPs / (step time x chips x the chip's published dense peak for the training dtype).
//
// Hardware FLOPs: what the StepGraph executes (recompute included, vocabulary padding, replicated
// K/V heads), the sum of Kernel::flops of its compute tasks.
#include <vector>

#include "trnsim/workload/specs.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

double model_flops_per_step(const ModelSpec& model, const TrainingSpec& training);

// Per simulated rank (indexed like StepGraph::simulated_ranks), over one step: the FLOPs the tensor
// engine executes (cost::Kernel::executed_flops: a causal kernel's skipped tiles not counted).
std::vector<double> simulated_rank_flops(const StepGraph& graph);

// All real ranks together: every simulated rank stands for total_ranks / simulated ranks.
double hardware_flops_per_step(const StepGraph& graph);

}  // namespace trnsim::workload
