#include "trnsim/workload/plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trnsim/error.hpp"

namespace trnsim::workload {
namespace {

template <class T>
const T& require(const std::optional<T>& v, const char* path) {
  if (!v) throw InputError(fmt::format("{}: not resolved (null); resolve it before building the step", path));
  return *v;
}

void require_positive(std::int64_t v, const char* path) {
  if (v < 1) throw InputError(fmt::format("{}: must be >= 1, found {}", path, v));
}

void check_model(const ModelSpec& m) {
  require_positive(m.layers, "/model/layers");
  require_positive(m.hidden, "/model/hidden");
  require_positive(m.heads, "/model/heads");
  require_positive(m.ffn_hidden, "/model/ffn_hidden");
  require_positive(m.vocab, "/model/vocab");
  if (m.hidden % m.heads != 0) {
    throw InputError(fmt::format("/model/heads: {} does not divide hidden ({})", m.heads, m.hidden));
  }
  const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (kv > m.heads || m.heads % kv != 0) {
    throw InputError(fmt::format("/model/kv_heads: {} does not divide heads ({})", kv, m.heads));
  }
}

}  // namespace

std::int64_t Plan::chunk_layers(std::int64_t layers, std::int64_t chunk) const {
  const std::int64_t c = chunks();
  const std::int64_t q = layers / c;
  const std::int64_t r = layers % c;
  return chunk >= c - 1 - r && chunk < c - 1 ? q + 1 : q;
}

std::int64_t Plan::chunk_first_layer(std::int64_t layers, std::int64_t chunk) const {
  const std::int64_t c = chunks();
  const std::int64_t q = layers / c;
  const std::int64_t r = layers % c;
  // Chunks before `chunk` that hold an extra layer: those in [c-1-r, chunk).
  return chunk * q + std::max<std::int64_t>(0, chunk - (c - 1 - r));
}

std::int64_t Plan::stage_layers(std::int64_t layers, std::int64_t stage) const {
  std::int64_t n = 0;
  for (std::int64_t k = stage; k < chunks(); k += pp) n += chunk_layers(layers, k);
  return n;
}

Plan make_plan(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& par,
               std::int64_t total_ranks) {
  check_model(model);
  require_positive(training.seq_len, "/training/seq_len");
  require_positive(training.global_batch, "/training/global_batch");
  require_positive(par.tp, "/parallelism/tp");
  require_positive(par.pp, "/parallelism/pp");
  require_positive(par.dp, "/parallelism/dp");
  Plan p;
  p.tp = par.tp;
  p.pp = par.pp;
  p.dp = par.dp;
  p.sequence_parallel = require(par.sequence_parallel, "/parallelism/sequence_parallel");
  p.zero = require(par.zero, "/parallelism/zero");
  p.schedule = require(par.schedule, "/parallelism/schedule");
  p.virtual_stages = require(par.virtual_stages, "/parallelism/virtual_stages");
  p.recompute = require(par.recompute, "/parallelism/recompute");
  p.micro_batch = require(training.micro_batch, "/training/micro_batch");
  p.rank_order = par.rank_order;
  require_positive(p.virtual_stages, "/parallelism/virtual_stages");
  require_positive(p.micro_batch, "/training/micro_batch");
  if (p.zero != 0 && p.zero != 1) {
    throw InputError(fmt::format("/parallelism/zero: expected 0 or 1, found {}", p.zero));
  }
  if (p.virtual_stages > 1 && p.schedule != PipelineSchedule::Interleaved) {
    throw InputError(fmt::format("/parallelism/virtual_stages: {} model chunks need schedule 1f1b-interleaved",
                                 p.virtual_stages));
  }
  if (total_ranks > 0 && p.ranks() != total_ranks) {
    throw InputError(fmt::format("/parallelism: tp x pp x dp = {} x {} x {} = {} does not match the cluster's {} ranks",
                                 p.tp, p.pp, p.dp, p.ranks(), total_ranks));
  }
  if (model.heads % p.tp != 0) {
    throw InputError(fmt::format("/parallelism/tp: {} does not divide heads ({})", p.tp, model.heads));
  }
  const std::int64_t kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
  if (kv % p.tp != 0 && p.tp % kv != 0) {
    throw InputError(fmt::format("/parallelism/tp: {} and kv_heads ({}): neither divides the other", p.tp, kv));
  }
  if (model.ffn_hidden % p.tp != 0) {
    throw InputError(fmt::format("/parallelism/tp: {} does not divide ffn_hidden ({})", p.tp, model.ffn_hidden));
  }
  if (p.sequence_parallel && training.seq_len % p.tp != 0) {
    throw InputError(fmt::format("/parallelism/sequence_parallel: tp ({}) does not divide seq_len ({})", p.tp,
                                 training.seq_len));
  }
  if (p.chunks() > model.layers) {
    throw InputError(fmt::format("/parallelism/pp: pp x virtual_stages = {} x {} = {} model chunks exceed layers ({}): "
                                 "every chunk needs at least one layer",
                                 p.pp, p.virtual_stages, p.chunks(), model.layers));
  }
  if (training.global_batch % (p.dp * p.micro_batch) != 0) {
    throw InputError(fmt::format("/training/global_batch: {} is not a multiple of dp x micro_batch = {} x {}",
                                 training.global_batch, p.dp, p.micro_batch));
  }
  p.micro_batches = training.global_batch / (p.dp * p.micro_batch);
  if (p.schedule == PipelineSchedule::Interleaved && p.virtual_stages > 1 && p.micro_batches % p.pp != 0) {
    throw InputError(fmt::format("/training/global_batch: 1f1b-interleaved needs the micro-batches per pipeline ({}) "
                                 "to be a multiple of pp ({})", p.micro_batches, p.pp));
  }
  RankLayout(p.tp, p.dp, p.pp, p.rank_order);  // validates the order string
  return p;
}

hw::Dtype matmul_dtype(Precision p) {
  switch (p) {
    case Precision::Fp32: return hw::Dtype::Fp32;
    case Precision::Tf32: return hw::Dtype::Tf32;
    case Precision::Fp16: return hw::Dtype::Fp16;
    case Precision::Fp8: return hw::Dtype::Fp8;
    case Precision::Bf16:
    case Precision::Bf16Sr: return hw::Dtype::Bf16;
  }
  return hw::Dtype::Bf16;
}

double activation_bytes(Precision p) { return p == Precision::Fp32 || p == Precision::Tf32 ? 4 : 2; }
}  // namespace trnsim::workload
