#include <catch2/catch.hpp>

#include "test_models.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/model_math.hpp"

using namespace trnsim::workload;
using namespace trnsim::workload::testing;

TEST_CASE("memory: GPT parameters are 12 h^2 + 13 h per layer plus embeddings") {
  // Per layer: QKV 3h^2 + 3h, out h^2 + h, fc1 4h^2 + 4h, fc2 4h^2 + h, two LayerNorms 4h.
  const ModelSpec m = gpt(24, 1024, 16, 50000);
  const double h = 1024;
  const double layer = 12 * h * h + 13 * h;
  // Tied embedding: V h token rows, 2048 h positions, final LayerNorm 2h.
  CHECK(parameter_count(m, 2048) == Approx(24 * layer + 50000 * h + 2048 * h + 2 * h));
}

TEST_CASE("memory: ZeRO-1 optimizer state is 12 bytes per parameter over dp") {
  const ModelSpec m = gpt(8, 1024, 16, 32000);
  const TrainingSpec t = training(1024, 64, 1);  // bf16, AdamW
  auto p = parallelism(2, 2, 4, true, Recompute::Selective, PipelineSchedule::OneFOneB, 1, 1);
  const auto est = estimate_memory(m, t, p, trnsim::workload::SoftwareSpec{});
  REQUIRE(est.stages.size() == 2);
  // Stage 0: 4 layers of (12 h^2 / tp + biases) plus the vocabulary-parallel embedding; the
  // tied head on the last stage keeps its own copy. Computed here from the shapes:
  const double h = 1024, tp = 2;
  const double layer = 12 * h * h / tp + (3 * h / tp + h + 4 * h / tp + h) + 4 * h;
  const double stage0 = 4 * layer + 32000 / tp * h + 1024 * h;
  const double stage1 = 4 * layer + 2 * h + 32000 / tp * h;
  CHECK(est.stages[0].parameters == Approx(stage0));
  CHECK(est.stages[1].parameters == Approx(stage1));
  // bf16's generic recipe (workload::default_recipe): fp32 master + two fp32 moments = 12 bytes,
  // sharded over dp = 4; bf16 weights 2; gradients accumulate in an fp32 buffer, 4.
  CHECK(est.stages[0].optimizer == Approx(12 * stage0 / 4));
  CHECK(est.stages[0].weights == Approx(2 * stage0));
  CHECK(est.stages[0].gradients == Approx(4 * stage0));
  // A stack that accumulates in bf16 and keeps no master copy (bf16 with stochastic rounding and
  // fp32 moments, as torch-neuronx's BERT tutorial): 2 + 2 + 2 x 4.
  SoftwareSpec sr;
  PrecisionRecipe r;
  r.grad_accumulation = Storage::Bf16;
  r.master_weights = Storage::None;
  sr.precision.push_back({Precision::Bf16, r});
  const auto lean = estimate_memory(m, t, p, sr);
  CHECK(lean.stages[0].gradients == Approx(2 * stage0));
  CHECK(lean.stages[0].optimizer == Approx(8 * stage0 / 4));
  p.zero = 0;
  CHECK(estimate_memory(m, t, p, trnsim::workload::SoftwareSpec{}).stages[0].optimizer == Approx(12 * stage0));
}

TEST_CASE("memory: GPT activations match Korthikanti et al. 2022 for each recompute mode") {
  // s = 2048, b = 2, h = 1024, a = 16 heads, t = 4, one stage (one micro-batch in flight), 6 layers.
  // The paper's layer stores the s x s softmax output and dropout mask: materialized attention.
  const ModelSpec m = gpt(6, 1024, 16, 32000);
  TrainingSpec t = training(2048, 8, 2);
  t.attention = trnsim::hw::AttentionKernel::Materialized;
  const double s = 2048, b = 2, h = 1024, a = 16, tp = 4, L = 6;
  SECTION("with sequence parallelism: sbh/t (34 + 5as/h), 34 sbh/t, 2 sbh/t") {
    const double none = s * b * h / tp * (34 + 5 * a * s / h);
    CHECK(estimate_memory(m, t, parallelism(4, 1, 1, true, Recompute::None), trnsim::workload::SoftwareSpec{}).stages[0].activations ==
          Approx(L * none));
    CHECK(estimate_memory(m, t, parallelism(4, 1, 1, true, Recompute::Selective), trnsim::workload::SoftwareSpec{}).stages[0].activations ==
          Approx(L * 34 * s * b * h / tp));
    // Full: the layer inputs, plus one layer's activations while it is recomputed.
    CHECK(estimate_memory(m, t, parallelism(4, 1, 1, true, Recompute::Full), trnsim::workload::SoftwareSpec{}).stages[0].activations ==
          Approx(L * 2 * s * b * h / tp + 34 * s * b * h / tp));
  }
  SECTION("without: sbh (10 + 24/t + 5as/(ht)), sbh (10 + 24/t), 2 sbh") {
    CHECK(estimate_memory(m, t, parallelism(4, 1, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{}).stages[0].activations ==
          Approx(L * s * b * h * (10 + 24 / tp + 5 * a * s / (h * tp))));
    CHECK(estimate_memory(m, t, parallelism(4, 1, 1, false, Recompute::Selective), trnsim::workload::SoftwareSpec{}).stages[0].activations ==
          Approx(L * s * b * h * (10 + 24 / tp)));
    CHECK(estimate_memory(m, t, parallelism(4, 1, 1, false, Recompute::Full), trnsim::workload::SoftwareSpec{}).stages[0].activations ==
          Approx(L * 2 * s * b * h + s * b * h * (10 + 24 / tp)));
  }
  SECTION("flash attention keeps no s x s term: none holds what selective holds") {
    t.attention = trnsim::hw::AttentionKernel::Flash;
    CHECK(estimate_memory(m, t, parallelism(4, 1, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{}).stages[0].activations ==
          Approx(L * s * b * h * (10 + 24 / tp)));
  }
}

TEST_CASE("memory: SwiGLU and GQA activations follow the same derivation") {
  // Llama shape: h = 1024, 16 heads of 64, 4 kv heads, f = 2816, tp = 2, SP, selective, b = 1.
  // Kept per layer: (2 norm inputs + QKV input + fc1 input) 4 e T h / t
  //   + Q and attention output 2 e T h / t + K, V 2 e T (4 kv / 2) 64 + SwiGLU 3 e T f / t.
  const ModelSpec m = llama(4, 1024, 16, 4, 2816, 32000);
  const TrainingSpec t = training(1024, 4, 1);
  const double T = 1024, e = 2, h = 1024, tp = 2, f = 2816;
  const double layer = 4 * e * T * h / tp + 2 * e * T * h / tp + 2 * e * T * (4 / tp) * 64 + 3 * e * T * f / tp;
  const auto est = estimate_memory(m, t, parallelism(2, 1, 1, true, Recompute::Selective), trnsim::workload::SoftwareSpec{});
  CHECK(est.stages[0].activations == Approx(4 * layer));
}

TEST_CASE("memory: the first 1F1B stage holds pp micro-batches, the last one") {
  const ModelSpec m = gpt(8, 1024, 16, 32000);
  const TrainingSpec t = training(1024, 16, 1);
  const auto est = estimate_memory(m, t, parallelism(1, 4, 1, false, Recompute::Selective), trnsim::workload::SoftwareSpec{});
  const double per_layer = 34.0 * 1024 * 1024;  // 34 sbh, b = 1, t = 1
  CHECK(est.stages[0].units_in_flight == 4);
  CHECK(est.stages[0].activations == Approx(4 * 2 * per_layer));
  CHECK(est.stages[3].activations == Approx(1 * 2 * per_layer));
  CHECK(&est.peak() == &est.stages[0]);
}

TEST_CASE("memory: over capacity is a finding with the breakdown, not an error") {
  // trn1: 32 GiB per chip over 2 cores = 16 GiB per rank.
  trnsim::hw::ChipSpec chip;
  chip.physical_cores = 2;
  chip.hbm_bytes = 32.0 * 1024 * 1024 * 1024;
  const double capacity = rank_memory_capacity(chip, 1);
  CHECK(capacity == Approx(16.0 * 1024 * 1024 * 1024));
  // GPT 2.6B-ish on one rank without sharding: 32 layers x 12 x 2560^2 = 2.5e9 parameters x 16
  // bytes = 40 GB > 16 GiB.
  const ModelSpec m = gpt(32, 2560, 32, 50000);
  const auto est = estimate_memory(m, training(2048, 8, 1), parallelism(1, 1, 1, false, Recompute::Selective), trnsim::workload::SoftwareSpec{});
  const auto f = memory_findings(est, capacity);
  REQUIRE(f.size() == 1);
  CHECK_THAT(f[0], Catch::StartsWith("out of memory: stage 0 needs") && Catch::Contains("optimizer"));
  CHECK(memory_findings(est, est.stages[0].total()).empty());
}

TEST_CASE("memory: an uneven split gives each stage its own layers' parameters and activations") {
  // 10 layers on pp = 4: stages hold 2, 3, 3, 2 layers (plan.hpp's rule). 1F1B: stage p holds
  // pp - p = 4, 3, 2, 1 micro-batches in flight.
  const ModelSpec m = gpt(10, 1024, 16, 32000);
  const TrainingSpec t = training(1024, 8, 1);
  const auto est = estimate_memory(m, t, parallelism(1, 4, 1, false, Recompute::Selective), trnsim::workload::SoftwareSpec{});
  REQUIRE(est.stages.size() == 4);
  const double h = 1024;
  const double layer = 12 * h * h + 13 * h;  // GPT layer with biases, tp = 1
  CHECK(est.stages[1].parameters == Approx(3 * layer));
  CHECK(est.stages[2].parameters == Approx(3 * layer));
  // First: 2 layers + embedding (V h tokens + s h positions); last: 2 layers + final norm + own head copy.
  CHECK(est.stages[0].parameters == Approx(2 * layer + 32000 * h + 1024 * h));
  CHECK(est.stages[3].parameters == Approx(2 * layer + 2 * h + 32000 * h));
  // Activations in layer-units: 4 x 2, 3 x 3, 2 x 3, 1 x 2.
  const double unit = est.stages[0].activations / 8;
  CHECK(est.stages[1].activations == Approx(9 * unit));
  CHECK(est.stages[2].activations == Approx(6 * unit));
  CHECK(est.stages[3].activations == Approx(2 * unit));
}

TEST_CASE("memory: interleaved stages weigh each chunk in flight by its own layers") {
  // 6 layers, pp 2, v 2: chunks of 1, 2, 2, 1 layers; stage 0 holds chunks 0 and 2 (1 and 2
  // layers), stage 1 chunks 1 and 3 (2 and 1). With m = 2 micro-batches:
  // - stage 0 warms up min(2 (pp - 1) + (v - 1) pp, m v) = 4 = all units: forwards of chunk 0
  //   (mb 0, 1) and chunk 1 (mb 0, 1) are all in flight: 1 + 1 + 2 + 2 = 6 layer-units.
  // - stage 1 warms up 2: F(c0) F(c0) = 2 + 2, then F(c1) +1 = 5, B(c1) -1, F(c1) +1 = 5, ...: peak 5
  //   (3 units in flight, not 3 x 2 = 6).
  const ModelSpec m = gpt(6, 1024, 16, 32000);
  const TrainingSpec t = training(1024, 2, 1);
  const auto p = parallelism(1, 2, 1, false, Recompute::Selective, PipelineSchedule::Interleaved, 2);
  const auto est = estimate_memory(m, t, p, trnsim::workload::SoftwareSpec{});
  const double layer = layer_activation_bytes(m, make_plan(m, t, p, 0), t, Recompute::Selective);
  CHECK(est.stages[0].activations == Approx(6 * layer));
  CHECK(est.stages[1].units_in_flight == 3);
  CHECK(est.stages[1].activations == Approx(5 * layer));
}
