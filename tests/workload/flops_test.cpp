#include <catch2/catch.hpp>

#include "test_models.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/flops.hpp"

using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// FLOPs of the compute tasks of one layer over the whole step.
double layer_flops(const StepGraph& g, std::int32_t layer) {
  double f = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Compute || t.layer != layer) continue;
    for (const auto& k : g.works[t.index].kernels) f += k.flops;
  }
  return f;
}

}  // namespace

TEST_CASE("flops: a GPT layer costs 24 B s h^2 (1 + s/6h) forward, x3 per step, x4 with full recompute") {
  // B = 8 sequences (2 micro-batches of 4), s = 512, h = 256: the forward matmuls are QKV 6Bsh^2,
  // attention 4Bs^2h (QK^T and AV, counted dense), output 2Bsh^2 and MLP 16Bsh^2.
  const ModelSpec m = gpt(4, 256, 4, 1024);
  // Materialized attention: the probabilities are stored, so "none" recomputes nothing.
  TrainingSpec t = training(512, 8, 4);
  t.attention = trnsim::hw::AttentionKernel::Materialized;
  const double B = 8, s = 512, h = 256, V = 1024, L = 4;
  const double fwd = 24 * B * s * h * h * (1 + s / (6 * h));
  const StepGraph none = build_step(m, t, parallelism(1, 1, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{});
  CHECK(layer_flops(none, 2) == Approx(3 * fwd));
  const StepGraph full = build_step(m, t, parallelism(1, 1, 1, false, Recompute::Full), trnsim::workload::SoftwareSpec{});
  CHECK(layer_flops(full, 2) == Approx(4 * fwd));
  // Selective recomputes the attention core forward once more: + 4 B s^2 h.
  const StepGraph sel = build_step(m, t, parallelism(1, 1, 1, false, Recompute::Selective), trnsim::workload::SoftwareSpec{});
  CHECK(layer_flops(sel, 2) == Approx(3 * fwd + 4 * B * s * s * h));
  // Plus the head: 2 B s h V forward, x3. Without recompute this is the model-FLOPs count.
  const double step = L * 3 * fwd + 3 * 2 * B * s * h * V;
  CHECK(hardware_flops_per_step(none) == Approx(step));
  CHECK(model_flops_per_step(m, t) == Approx(step));
  // Megatron-LM's form without recompute: 72 B s L h^2 (1 + s/6h + V/(12 L h)).
  CHECK(model_flops_per_step(m, t) == Approx(72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))));
  // The flash kernel never stores the probabilities: under none and selective alike it rebuilds
  // them in the backward pass, S = Q K^T: + 2 B s^2 h (its causal tiles are skipped: counted
  // dense here all the same, Kernel::flops).
  t.attention = trnsim::hw::AttentionKernel::Flash;
  CHECK(layer_flops(build_step(m, t, parallelism(1, 1, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{}), 2) ==
        Approx(3 * fwd + 2 * B * s * s * h));
  CHECK(layer_flops(build_step(m, t, parallelism(1, 1, 1, false, Recompute::Selective), trnsim::workload::SoftwareSpec{}), 2) ==
        Approx(3 * fwd + 2 * B * s * s * h));
}

TEST_CASE("flops: tensor and pipeline parallelism split the same hardware FLOPs over the ranks") {
  const ModelSpec m = gpt(4, 256, 4, 1024);
  const TrainingSpec t = training(512, 8, 2);
  const double one = hardware_flops_per_step(build_step(m, t, parallelism(1, 1, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{}));
  // TP 2 x PP 2 x DP 2: per-rank FLOPs scale by 1/8, times 8 ranks (vocabulary 1024 divides by 2).
  BuildOptions sym;
  const double par = hardware_flops_per_step(build_step(m, t, parallelism(2, 2, 2, true, Recompute::None), trnsim::workload::SoftwareSpec{}, sym));
  CHECK(par == Approx(one));
  BuildOptions full;
  full.symmetric = false;
  CHECK(hardware_flops_per_step(build_step(m, t, parallelism(2, 2, 2, true, Recompute::None), trnsim::workload::SoftwareSpec{}, full)) ==
        Approx(one));
}
