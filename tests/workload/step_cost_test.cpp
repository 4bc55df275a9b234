#include <catch2/catch.hpp>

#include "test_models.hpp"
#include "trnsim/cost/compute_model.hpp"
#include "trnsim/workload/build_step.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

double step_compute_seconds(const StepGraph& g, const cost::ComputeModel& cm) {
  double s = 0;
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::Compute) s += cm.cost(g.works[t.index].kernels).seconds;
  }
  return s;
}

}  // namespace

TEST_CASE("step cost: one device, no parallelism, sums the per-kernel closed form") {
  hw::Calibration cal;
  cal.matmul_efficiency = 0.5;
  cal.task_overhead_s = 1e-6;
  const cost::ComputeModel cm(tensor_only_chip(), cal, hw::Dtype::Bf16, 1);
  const double rate = 2.0 * 128 * 128 * 1e9 * 0.5;  // FLOP/s on full tiles
  // Every matmul dimension is a multiple of 128 (h = 256, head_dim = 128, s = 256, f = 1024,
  // V = 1024), so no tile is partial and a product takes 2mnk / rate.
  ModelSpec m = gpt(3, 256, 2, 1024);
  const TrainingSpec t = training(256, 4, 2);  // 2 micro-batches of b = 2
  const double b = 2, s = 256, h = 256, V = 1024, L = 3, mbs = 2;
  // Kernels per micro-batch: layer forward 12 (norm1, qkv, scores, P's transpose, values, out,
  // residual1, norm2, fc1, gelu, fc2, residual2) and backward 16 (fc2 d/w, gelu', fc1 d/w, norm2',
  // out d/w, dV, dP, dS's transpose, dQ, dK, qkv d/w, norm1') after the kernel with which the flash kernel rebuilds the
  // probabilities (scores), and the gradient accumulation (bf16's default recipe accumulates in
  // fp32, so every micro-batch adds its gradients into the buffer); embedding 2 + 1 + its
  // accumulation; head 3 + 4 + its accumulation; the optimizer's gradient norm and update.
  const double kernels = mbs * (L * (12 + 16 + 1 + 1) + (2 + 1 + 1) + (3 + 4 + 1)) + 2;
  // Forward matmul FLOPs per micro-batch: layer 24 b s h^2 + 4 b s^2 h, head 2 b s h V; backward 2x.
  const double layer_dense = 24 * b * s * h * h;
  const double head = 2 * b * s * h * V;
  const double attention = 4 * b * s * s * h;
  // Flash attention transposes P (forward) and dS (backward) on the tensor engine: a [s x s] tile
  // set per head, one pass of s/128 column tiles each streaming s rows (k = 1 fills one 128-row
  // contraction tile), as a 2 s s 128 FLOP product per head: b x heads x 2 s^2 x 128 =
  // 2 b s^2 h = attention / 2 each, attention per layer and micro-batch for the two; no FLOPs.
  const double transposes = attention;
  SECTION("encoder: dense attention") {
    m.arch = ModelArch::Encoder;
    const StepGraph g = build_step(m, t, parallelism(1, 1, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{});
    // The attention core runs forward, backward (2x), and its scores (half of it) once more.
    const double expected =
        mbs * (3 * (L * (layer_dense + attention) + head) + L * attention / 2 + L * transposes) / rate + kernels * 1e-6;
    CHECK(step_compute_seconds(g, cm) == Approx(expected).epsilon(1e-9));
  }
  SECTION("decoder: causal attention skips the upper tile (s = 2 tiles: 3 of 4 tile passes run)") {
    const StepGraph g = build_step(m, t, parallelism(1, 1, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{});
    const double expected =
        mbs * (3 * (L * (layer_dense + 0.75 * attention) + head) + L * 0.75 * attention / 2 +
               L * 0.75 * transposes) / rate +
        kernels * 1e-6;
    CHECK(step_compute_seconds(g, cm) == Approx(expected).epsilon(1e-9));
  }
}
