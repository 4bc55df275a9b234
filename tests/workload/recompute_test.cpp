// The recompute modes of parallelism.recompute (workload/specs.hpp): the FLOPs each reruns in the
// backward and the activations each holds, derived by hand from the kernels and the memory
// formulas (layer_steps.cpp, memory.hpp).
#include <catch2/catch.hpp>

#include "test_models.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// FLOPs of every Recompute task of the graph (all simulated ranks).
double recomputed_flops(const StepGraph& g) {
  double f = 0;
  for (const Task& t : g.tasks) {
    if (t.kind != TaskKind::Compute || t.category != Category::Recompute) continue;
    for (const auto& k : g.works[t.index].kernels) f += k.flops;
  }
  return f;
}

double recomputed(Recompute rc, std::int64_t pp) {
  // Llama shape, 4 layers: h = 256, 2 heads of 128 (q width 256), 1 KV head (kv width 128),
  // f = 512; one micro-batch of b = 1, s = 256. Flash attention (the default kernel).
  const ModelSpec m = llama(4, 256, 2, 1, 512, 1024);
  return recomputed_flops(build_step(m, training(256, 1, 1), parallelism(1, pp, 1, false, rc), SoftwareSpec{}));
}

}  // namespace

TEST_CASE("recompute: the FLOPs each mode reruns, derived by hand") {
  // T = b s = 256 tokens, h = 256, q = 256, kv = 128, f = 512, head_dim 128, 2 heads, L = 4.
  // Kernel FLOPs count 2 m n k (the causal kernel's skipped tiles are counted, as MFU does).
  const double T = 256, s = 256, h = 256, q = 256, kv = 128, f = 512, L = 4;
  // The flash kernel's rebuild of the probabilities, S = Q K^T per head: 2 s^2 x head_dim x heads.
  const double A = 2 * s * s * q;
  // One layer's forward: qkv 2 T h (q + 2 kv), scores and values 2 A, out 2 T q h, gate+up
  // 2 T h 2f, down 2 T f h.
  const double F = 2 * T * h * (q + 2 * kv) + 2 * A + 2 * T * q * h + 2 * T * h * 2 * f + 2 * T * f * h;
  // TorchTitan's op policy: the even matmuls k (2 T h kv), o (2 T q h), up (2 T h f), and the rebuild.
  const double op = A + 2 * T * h * kv + 2 * T * q * h + 2 * T * h * f;
  CHECK(recomputed(Recompute::None, 1) == Approx(L * A));
  CHECK(recomputed(Recompute::Selective, 1) == Approx(L * A));
  CHECK(recomputed(Recompute::SelectiveOp, 1) == Approx(L * op));
  CHECK(recomputed(Recompute::Full, 1) == Approx(L * F));
  // Every 2nd layer in full (positions 2 and 4): half the layers' forward again, the others rebuild.
  CHECK(recomputed(Recompute::FullEvery2, 1) == Approx(2 * F + 2 * A));
  CHECK(recomputed(Recompute::FullEvery3, 1) == Approx(1 * F + 3 * A));
  CHECK(recomputed(Recompute::FullEvery4, 1) == Approx(1 * F + 3 * A));
  // pp 2: each rank counts its own 2 layers (positions 1, 2), as TorchTitan counts the blocks it
  // wraps per process: every 2nd is one layer per stage, every 4th none at all.
  CHECK(recomputed(Recompute::FullEvery2, 2) == Approx(2 * F + 2 * A));
  CHECK(recomputed(Recompute::FullEvery4, 2) == Approx(4 * A));
  // The op policy costs more than selective and less than full, as it should.
  CHECK(op > A);
  CHECK(op < F);
}

TEST_CASE("recompute: full-every-n for any n (5 and 7 on 12 layers), derived by hand") {
  // The shape above with L = 12 layers, one pipeline rank. F and A as in the test above:
  // T = s = 256, h = q = 256, kv = 128, f = 512.
  const double T = 256, s = 256, h = 256, q = 256, kv = 128, f = 512;
  const double A = 2 * s * s * q;
  const double F = 2 * T * h * (q + 2 * kv) + 2 * A + 2 * T * q * h + 2 * T * h * 2 * f + 2 * T * f * h;
  const ModelSpec m = llama(12, 256, 2, 1, 512, 1024);
  const auto rerun = [&](Recompute rc) {
    return recomputed_flops(build_step(m, training(256, 1, 1), parallelism(1, 1, 1, false, rc), SoftwareSpec{}));
  };
  // n = 5: positions 5 and 10 of 1..12 in full (2 F), the other 10 layers rebuild only (10 A).
  CHECK(rerun(full_every(5)) == Approx(2 * F + 10 * A));
  // n = 7: position 7 only (1 F), 11 layers rebuild (11 A).
  CHECK(rerun(full_every(7)) == Approx(1 * F + 11 * A));
  // n beyond the layers: no layer in full, as none (12 A).
  CHECK(rerun(full_every(1 << 20)) == Approx(12 * A));
  // The named constants are the same values as full_every.
  CHECK(full_every(2) == Recompute::FullEvery2);
  CHECK(full_every(4) == Recompute::FullEvery4);
}

TEST_CASE("recompute: spellings of full-every-n round-trip, a bad n is rejected") {
  for (const std::int64_t n : {std::int64_t{2}, std::int64_t{5}, std::int64_t{7}, std::int64_t{1} << 20}) {
    const std::string text = "full-every-" + std::to_string(n);
    CHECK(recompute_text(full_every(n)) == text);
    REQUIRE(parse_recompute(text).has_value());
    CHECK(*parse_recompute(text) == full_every(n));
    CHECK(full_recompute_interval(*parse_recompute(text)) == n);
  }
  for (const Recompute r : {Recompute::None, Recompute::Selective, Recompute::SelectiveOp, Recompute::Full})
    CHECK(parse_recompute(recompute_text(r)) == r);
  // n = 1 is `full` (one spelling per mode), 0 and 2^21 are out of range, the rest not numbers.
  for (const char* bad : {"full-every-1", "full-every-0", "full-every-2097152", "full-every-x", "full-every-",
                          "full-every-05", "full-every--3", "full-every-+3", "full-every-99999999999", "x", ""})
    CHECK_FALSE(parse_recompute(bad).has_value());
}

TEST_CASE("recompute: the op policy reruns a MoE layer's attention half, not its experts") {
  // The shape above with 4 experts of width 256, top-2, every layer MoE: per layer the rebuild A
  // and the k and o projections (2 T h kv + 2 T q h); no up projection, no expert GEMM, no router
  // (assumption of layer_steps.cpp: the expert block is kept).
  ModelSpec m = llama(4, 256, 2, 1, 512, 1024);
  m.experts = 4;
  m.experts_per_token = 2;
  m.expert_ffn_hidden = 256;
  const double T = 256, s = 256, h = 256, q = 256, kv = 128, L = 4;
  const double A = 2 * s * s * q;
  const StepGraph g = build_step(m, training(256, 1, 1), parallelism(1, 1, 1, false, Recompute::SelectiveOp),
                                 SoftwareSpec{});
  CHECK(recomputed_flops(g) == Approx(L * (A + 2 * T * h * kv + 2 * T * q * h)));
  // Held per layer (memory.hpp, tp 1, e = 2, E = 4, k = 2, balanced: R = T k = 512 rows): the
  // attention half, input e T h + q, v, attention output e T (2 q + kv) = 131,072 + 327,680, plus
  // the expert block as under selective: router input e T h (131,072) + fp32 probabilities 4 T E
  // (4,096) + expert input e R h (262,144) + SwiGLU intermediates 3 e R f (786,432) + expert
  // outputs e T k h (262,144): 1,904,640 per layer, 4 layers in flight.
  const double e = 2, E = 4, k = 2, f = 256, R = T * k;
  const double held = e * T * h + e * T * (2 * q + kv) + e * T * h + 4 * T * E + e * R * h + 3 * e * R * f +
                      e * T * k * h;
  CHECK(held == 1904640);
  CHECK(estimate_memory(m, training(256, 1, 1), parallelism(1, 1, 1, false, Recompute::SelectiveOp), SoftwareSpec{})
            .stages[0]
            .activations == Approx(L * held));
}

TEST_CASE("recompute: positions count a rank's layers chunk by chunk") {
  // 8 layers, pp 2, 2 virtual stages: chunks of 2 layers; stage 0 holds chunks 0 (layers 0, 1)
  // and 2 (layers 4, 5), so layer 4 is its 3rd layer and layer 5 its 4th.
  const ModelSpec m = llama(8, 256, 2, 1, 512, 1024);
  ParallelismSpec p = parallelism(1, 2, 1, false, Recompute::FullEvery2, PipelineSchedule::Interleaved, 2);
  const Plan plan = make_plan(m, training(256, 2, 1), p, 0);
  CHECK(plan.stage_position(8, 0, 1) == 2);
  CHECK(plan.stage_position(8, 2, 4) == 3);
  CHECK(plan.stage_position(8, 2, 5) == 4);
  CHECK(plan.stage_position(8, 3, 7) == 4);  // stage 1: layers 2, 3, then 6, 7
  CHECK(plan.layer_mode(8, 2, 5) == Recompute::Full);
  CHECK(plan.layer_mode(8, 2, 4) == Recompute::None);
}

TEST_CASE("recompute: activations each mode holds, derived by hand") {
  // Llama shape, 4 layers: h = 512, 4 heads of 128 and 2 KV heads on tp 2 with SP: per rank
  // q_r = 256, kv_r = 128, f_r = 512; T = b s = 256, e = 2 (bf16), sigma = 1/2. One stage, one
  // micro-batch in flight: activations = 4 layers' held bytes (+ one layer kept while recomputed).
  const ModelSpec m = llama(4, 512, 4, 2, 1024, 1024);
  const TrainingSpec t = training(256, 1, 1);
  const double T = 256, e = 2, sigma = 0.5, h = 512, q = 256, kv = 128, f = 512;
  const auto held = [&](Recompute rc) {
    return estimate_memory(m, t, parallelism(2, 1, 1, true, rc), SoftwareSpec{}).stages[0].activations;
  };
  // Selective (Korthikanti, SwiGLU): 4 sigma e T h + 2 e T q + 2 e T kv + 3 e T f = 1,703,936.
  const double selective = 4 * sigma * e * T * h + 2 * e * T * q + 2 * e * T * kv + 3 * e * T * f;
  CHECK(selective == 1703936);
  // Op policy: input sigma e T h (131,072) + q, v, attention output e T (2 q + kv) (327,680)
  // + gate e T f (262,144) + down projection e T h (262,144) + 2 reduce-scatters 2 sigma e T h
  // (262,144) = 1,245,184.
  const double op = sigma * e * T * h + e * T * (2 * q + kv) + e * T * f + e * T * h + 2 * sigma * e * T * h;
  CHECK(op == 1245184);
  const double input = sigma * e * T * h;  // a fully recomputed layer's input: 131,072
  CHECK(held(Recompute::None) == Approx(4 * selective));  // flash: none holds what selective holds
  CHECK(held(Recompute::Selective) == Approx(4 * selective));
  CHECK(held(Recompute::SelectiveOp) == Approx(4 * 1245184.0));
  CHECK(held(Recompute::Full) == Approx(4 * input + selective));
  // Every 2nd: layers 2 and 4 hold their input, layers 1 and 3 everything, plus the layer being
  // recomputed: 2 x 131,072 + 3 x 1,703,936 = 5,373,952.
  CHECK(held(Recompute::FullEvery2) == Approx(5373952));
  CHECK(held(Recompute::FullEvery4) == Approx(input + 4 * selective));
}
