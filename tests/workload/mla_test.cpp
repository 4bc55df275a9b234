// Multi-head latent attention (ModelSpec::attention, workload/model_math.hpp, mla_steps.hpp):
// parameters, model FLOPs and the attention core's FLOPs against hand counts in the comments.
#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "test_models.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/flops.hpp"
#include "trnsim/workload/model_math.hpp"
#include "trnsim/workload/plan.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

AttentionSpec mla(std::int64_t q_lora, std::int64_t kv_lora, std::int64_t nope, std::int64_t rope, std::int64_t v) {
  return AttentionSpec{.kind = AttentionKind::Mla, .q_lora_rank = q_lora, .kv_lora_rank = kv_lora,
                       .qk_nope_head_dim = nope, .qk_rope_head_dim = rope, .v_head_dim = v};
}

// DeepSeek-V3's attention (config.json: q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
// qk_rope_head_dim 64, v_head_dim 128; 128 heads, hidden 7168) on a dense SwiGLU layer of 18432.
ModelSpec deepseek_attention(std::int64_t layers) {
  ModelSpec m = llama(layers, 7168, 128, 128, 18432, 129280);
  m.attention = mla(1536, 512, 128, 64, 128);
  return m;
}

// A small MLA model: h 256, 4 heads, q latent 64, kv latent 32, heads of 32 + 16 rotary (qk 48)
// and value 32; SwiGLU 512, vocabulary 1024, 2 layers.
ModelSpec small_mla() {
  ModelSpec m = llama(2, 256, 4, 4, 512, 1024);
  m.attention = mla(64, 32, 32, 16, 32);
  return m;
}

// FLOPs of the kernels named `name` (every kernel when empty) in the compute tasks of `layer`
// over the step.
double kernel_flops(const StepGraph& g, std::int32_t layer, std::string_view name = {}) {
  double f = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Compute || t.layer != layer) continue;
    for (const auto& k : g.works[t.index].kernels) {
      if (name.empty() || k.name == name) f += k.flops;
    }
  }
  return f;
}

}  // namespace

TEST_CASE("mla: DeepSeek-V3's attention holds 187.1 M parameters per layer, split by heads under TP") {
  const ModelSpec m = deepseek_attention(1);
  // W_dq 7168 x 1536 = 11,010,048; W_uq 1536 x 128 (128 + 64) = 1536 x 24,576 = 37,748,736;
  // W_dkv 7168 x (512 + 64) = 4,128,768; W_ukv 512 x 128 (128 + 128) = 512 x 32,768 = 16,777,216;
  // W_o 128 x 128 x 7168 = 16,384 x 7168 = 117,440,512. Sum 187,105,280; the latent norms 1536 + 512.
  CHECK(attention_projection_parameters(layer_dims(m, 1)) == 187105280.0);
  // The layer: attention 187,107,328, two RMSNorms 2 x 7168, SwiGLU 3 x 7168 x 18432 = 396,361,728.
  CHECK(layer_parameters(layer_dims(m, 1), 0).total() == 187107328.0 + 14336 + 396361728.0);
  // TP 4: 32 heads per rank; the down-projections and latent norms replicated, the rest split:
  // 11,010,048 + 1536 x 6144 + 4,128,768 + 512 x 8192 + 4096 x 7168 + 2048
  // = 11,010,048 + 9,437,184 + 4,128,768 + 4,194,304 + 29,360,128 + 2048 = 58,132,480.
  const LayerDims d4 = layer_dims(m, 4);
  CHECK(attention_projection_parameters(d4) + static_cast<double>(d4.q_lora + d4.kv_lora) == 58132480.0);
}

TEST_CASE("mla: model FLOPs per token per layer are the projections' 2 x parameters plus 2 s heads (192 + 128)") {
  const ModelSpec m = deepseek_attention(1);
  const TrainingSpec t = training(4096, 1, 1);
  const double s = 4096, h = 7168, V = 129280;
  // Per token per layer, forward: 2 x 187,105,280 (projections) + 2 x 396,361,728 (MLP) + the core
  // Q K^T (2 s 128 x 192) and P V (2 s 128 x 128) = 81,920 s; x3 for the step, plus the head
  // 2 h V per token, x3.
  const double per_token_layer = 2 * 187105280.0 + 2 * 396361728.0 + 81920 * s;
  CHECK(model_flops_per_step(m, t) == Approx(3 * s * (per_token_layer + 2 * h * V)));
}

TEST_CASE("mla: the attention core multiplies over 192 for Q K^T and 128 for P V, and the layer adds up") {
  const ModelSpec m = small_mla();
  TrainingSpec t = training(128, 2, 1);  // 2 micro-batches of 1 sequence of 128 tokens
  t.attention = hw::AttentionKernel::Flash;
  const double B = 2, s = 128, heads = 4, qk = 48, v = 32;
  const StepGraph g = build_step(m, t, parallelism(1, 1, 1, false, Recompute::None), plain_software());
  // Over the step's B sequences: scores 2 B heads s^2 qk, forward and rebuilt in the backward (the
  // flash kernel keeps no probabilities); values 2 B heads s^2 v.
  const double scores = 2 * B * heads * s * s * qk;
  const double values = 2 * B * heads * s * s * v;
  CHECK(kernel_flops(g, 1, "attn_scores") == Approx(2 * scores));
  CHECK(kernel_flops(g, 1, "attn_values") == Approx(values));
  // Backward: dV = P^T dO and dP = dO V^T over v, dQ = dS K and dK = dS^T Q over qk.
  CHECK(kernel_flops(g, 1, "attn_dv") + kernel_flops(g, 1, "attn_dp") == Approx(2 * values));
  CHECK(kernel_flops(g, 1, "attn_dq") + kernel_flops(g, 1, "attn_dk") == Approx(2 * scores));
  // Projections: 256 x 64 + 64 x 4 x 48 + 256 x (32 + 16) + 32 x 4 x (32 + 32) + 4 x 32 x 256
  // = 16,384 + 12,288 + 12,288 + 8192 + 32,768 = 81,920 weights; MLP 3 x 256 x 512 = 393,216.
  // Forward 2 B s (81,920 + 393,216) + scores + values; the step 3 x forward + the rebuild.
  const double forward = 2 * B * s * (81920.0 + 393216.0) + scores + values;
  CHECK(kernel_flops(g, 1) == Approx(3 * forward + scores));
  // Full recompute replays the whole forward, the MLA projections included.
  const StepGraph full = build_step(m, t, parallelism(1, 1, 1, false, Recompute::Full), plain_software());
  CHECK(kernel_flops(full, 1) == Approx(4 * forward));
  // Model FLOPs count the same forward, x3 (no recompute), per layer.
  const double head = 2 * B * s * 256 * 1024;
  CHECK(model_flops_per_step(m, t) == Approx(3 * (2 * forward + head)));
}

TEST_CASE("mla: TorchTitan's op policy reruns the up-projections, their norms and the gate, keeps o") {
  const ModelSpec m = small_mla();
  TrainingSpec t = training(128, 2, 1);
  t.attention = hw::AttentionKernel::Flash;
  const double B = 2, s = 128, T = B * s, heads = 4, qk = 48, h = 256, f = 512;
  const StepGraph g = build_step(m, t, parallelism(1, 1, 1, false, Recompute::SelectiveOp), plain_software());
  double rerun = 0;
  for (const auto& task : g.tasks) {
    if (task.kind != TaskKind::Compute || task.layer != 1 || task.category != Category::Recompute) continue;
    for (const auto& k : g.works[task.index].kernels) rerun += k.flops;
  }
  // MLA's matmuls in order q_down, q_up, kv_down, kv_up, o: the 2nd and 4th rerun, q_up 64 x 4 x 48
  // = 12,288 and kv_up 32 x 4 x (32 + 32) = 8192 weights; then the MLP's gate (the 6th), 256 x 512
  // = 131,072 weights (up, the 7th, kept; down, the 8th, not needed by the backward). Matmul FLOPs
  // 2 T x weights; plus the flash kernel's rebuild of the scores, 2 B heads s^2 qk. The norms,
  // rotary, residual and activation rerun too, as vector work (no FLOPs in Kernel::flops).
  const double matmuls = 2 * T * (12288.0 + 8192.0 + h * f);
  const double rebuild = 2 * B * heads * s * s * qk;
  CHECK(rerun == Approx(matmuls + rebuild));
}

TEST_CASE("mla: a latent-attention model with grouped key/value heads, biases or learned positions is refused") {
  ModelSpec m = small_mla();
  m.kv_heads = 2;
  CHECK_THROWS_WITH(check_model(m), Catch::Contains("/model/kv_heads") && Catch::Contains("found 2"));
  m = small_mla();
  m.biases = true;
  CHECK_THROWS_WITH(check_model(m), Catch::Contains("/model/biases"));
  m = small_mla();
  m.learned_positions = true;
  CHECK_THROWS_WITH(check_model(m), Catch::Contains("/model/learned_positions"));
  CHECK_NOTHROW(check_model(small_mla()));
}

TEST_CASE("mla: the replicated down-projections' gradients are all-reduced over TP once per step") {
  // DeepSeek-V3's attention on 2 layers, TP 8. Per layer the parameters every TP rank holds in
  // full: W_dq 7168 x 1536 = 11,010,048, W_dkv 7168 x (512 + 64) = 4,128,768, the latent norms'
  // gains 1536 + 512 = 2,048: 15,140,864. Two layers, bf16 gradients (2 bytes, the default
  // recipe): 2 x 15,140,864 x 2 = 60,563,456 bytes, in one all-reduce over the 8 TP ranks after
  // the last micro-batch's backward (2 micro-batches here, still one call).
  const double per_layer = 7168.0 * 1536 + 7168.0 * (512 + 64) + 1536 + 512;
  REQUIRE(per_layer == 15140864.0);
  const auto step_end_tp_reductions = [](const StepGraph& g, std::int32_t rank) {
    std::vector<double> bytes;
    for (const auto& t : g.tasks) {
      if (t.rank != rank || t.kind != TaskKind::Collective || t.micro_batch != -1) continue;
      const Collective& c = g.collectives[t.index];
      if (c.op == CollectiveOp::AllReduce && g.groups_of(c).group_size == 8) bytes.push_back(c.bytes);
    }
    return bytes;
  };
  const ModelSpec m = deepseek_attention(2);
  const StepGraph g = build_step(m, training(64, 2, 1), parallelism(8, 1, 1, true, Recompute::Selective), SoftwareSpec{});
  const auto one = step_end_tp_reductions(g, 0);
  REQUIRE(one.size() == 1);
  CHECK(one[0] == 2 * per_layer * 2);
  CHECK(one[0] == 60563456.0);
  // PP 2: each stage all-reduces its own layer's, 1 x 15,140,864 x 2 bytes.
  const StepGraph staged =
      build_step(m, training(64, 2, 1), parallelism(8, 2, 1, true, Recompute::Selective), SoftwareSpec{});
  REQUIRE(staged.simulated_ranks.size() >= 2);
  for (const std::int32_t r : staged.simulated_ranks) {
    const auto per_stage = step_end_tp_reductions(staged, r);
    REQUIRE(per_stage.size() == 1);
    CHECK(per_stage[0] == per_layer * 2);
  }
  // Under MHA nothing is replicated over TP: no such call.
  const StepGraph mha = build_step(llama(2, 7168, 128, 128, 18432, 129280), training(64, 2, 1),
                                   parallelism(8, 1, 1, true, Recompute::Selective), SoftwareSpec{});
  CHECK(step_end_tp_reductions(mha, 0).empty());
}
