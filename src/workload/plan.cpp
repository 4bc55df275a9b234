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

std::int64_t Plan::stage_position(std::int64_t layers, std::int64_t chunk, std::int64_t layer) const {
  std::int64_t before = 0;
  for (std::int64_t k = chunk % pp; k < chunk; k += pp) before += chunk_layers(layers, k);
  return before + layer - chunk_first_layer(layers, chunk) + 1;
}

Plan make_plan(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& par,
               std::int64_t total_ranks) {
  check_model(model);
  check_plan(model, training, par, total_ranks);
  Plan p;
  p.tp = par.tp;
  p.pp = par.pp;
  p.dp = par.dp;
  p.ep = par.ep;
  p.cp = par.cp;
  p.sequence_parallel = require(par.sequence_parallel, "/parallelism/sequence_parallel");
  p.zero = require(par.zero, "/parallelism/zero");
  p.schedule = require(par.schedule, "/parallelism/schedule");
  p.virtual_stages = require(par.virtual_stages, "/parallelism/virtual_stages");
  p.recompute = require(par.recompute, "/parallelism/recompute");
  p.micro_batch = require(training.micro_batch, "/training/micro_batch");
  p.rank_order = par.rank_order;
  p.fsdp_prefetch = par.fsdp_prefetch;
  p.micro_batches = training.global_batch / (p.dp * p.micro_batch);
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
