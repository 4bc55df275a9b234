#pragma once
// Hand-built specs for the workload tests (no config layer).
#include <optional>

#include "trnsim/hw/specs.hpp"
#include "trnsim/workload/software.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::workload::testing {

// A GPT-style decoder: LayerNorm, GELU (f = 4h), learned positions, biases on every projection
// and norm, tied embeddings.
inline ModelSpec gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t vocab) {
  return ModelSpec{.name = "gpt-test", .layers = layers, .hidden = hidden, .heads = heads, .kv_heads = heads,
                   .ffn_hidden = 4 * hidden, .vocab = vocab, .mlp = MlpKind::Gelu, .norm = NormKind::LayerNorm,
                   .learned_positions = true, .tied_embeddings = true, .source = "test", .biases = true};
}

// A Llama-style decoder: RMSNorm, SwiGLU, rotary, grouped-query attention.
inline ModelSpec llama(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                       std::int64_t ffn, std::int64_t vocab) {
  return ModelSpec{.name = "llama-test", .layers = layers, .hidden = hidden, .heads = heads, .kv_heads = kv_heads,
                   .ffn_hidden = ffn, .vocab = vocab, .mlp = MlpKind::SwiGlu, .norm = NormKind::RmsNorm,
                   .source = "test"};
}

inline TrainingSpec training(std::int64_t seq_len, std::int64_t global_batch, std::int64_t micro_batch) {
  return TrainingSpec{.seq_len = seq_len, .global_batch = global_batch, .micro_batch = micro_batch,
                      .attention = std::nullopt};
}

inline ParallelismSpec parallelism(std::int64_t tp, std::int64_t pp, std::int64_t dp, bool sp, Recompute rc,
                                   PipelineSchedule schedule = PipelineSchedule::OneFOneB, std::int64_t v = 1,
                                   int zero = 0) {
  return ParallelismSpec{.tp = tp, .pp = pp, .dp = dp, .sequence_parallel = sp, .zero = zero, .schedule = schedule,
                         .virtual_stages = v, .recompute = rc, .fsdp_prefetch = std::nullopt};
}

// A stack whose weight-gradient GEMMs accumulate into the buffer themselves (no separate
// accumulation kernel), for tests that count kernels per layer; otherwise workload's defaults.
inline SoftwareSpec plain_software() {
  SoftwareSpec s;
  s.kernels.fused_grad_accumulation = true;
  return s;
}

// A one-core chip whose tensor engine is the only finite rate: 128x128 at 1 GHz (peak
// 2 x 128 x 128 x 1e9 FLOP/s). Vector, scalar and HBM are made so fast that their time vanishes.
inline hw::ChipSpec tensor_only_chip() {
  hw::ChipSpec c;
  c.name = "tensor-only";
  c.physical_cores = 1;
  c.core.pe_rows = 128;
  c.core.pe_cols = 128;
  c.core.tensor_clock_hz = 1e9;
  c.core.vector = {1e20, 1e10};
  c.core.scalar = {1e20, 1e10};
  c.peak.bf16 = 2.0 * 128 * 128 * 1e9;
  c.hbm_bandwidth = 1e30;
  return c;
}

}  // namespace trnsim::workload::testing
