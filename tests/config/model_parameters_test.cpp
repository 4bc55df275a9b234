// ModelSpec::parameters() against a hand count and against published model sizes.
#include <catch2/catch.hpp>

#include "trnsim/config/presets.hpp"

using namespace trnsim;

TEST_CASE("model: parameters of a tiny model match a hand count") {
  workload::ModelSpec m;
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 1;  // head_dim 4
  m.ffn_hidden = 16;
  m.vocab = 10;
  m.mlp = workload::MlpKind::SwiGlu;
  m.norm = workload::NormKind::RmsNorm;
  // embeddings 10*8 = 80; per layer: q,o 2*64 = 128, k,v 2*8*4 = 64, MLP 3*8*16 = 384, 2 norms 16
  // -> 592, x2 = 1184; final norm 8; untied head 80. Total 1352.
  CHECK(m.parameters() == 1352);
  m.tied_embeddings = true;
  CHECK(m.parameters() == 1352 - 80);
  // GELU MLP with biases and LayerNorm: per layer q,o 128 + k,v 64 + biases (2*8 + 2*4 = 24),
  // MLP 2*8*16 = 256 + biases 16 + 8, norms 2*16 = 32 -> 528, x2 = 1056; embeddings 80; final norm 16.
  m.mlp = workload::MlpKind::Gelu;
  m.norm = workload::NormKind::LayerNorm;
  m.biases = true;
  CHECK(m.parameters() == 1056 + 80 + 16);
  // 4 experts: MLP 4 x (256 + 24) + router 8*4 = 1152 instead of 280 -> +872 per layer.
  m.experts = 4;
  m.experts_per_token = 1;
  CHECK(m.parameters() == 1056 + 80 + 16 + 2 * 872);
}

TEST_CASE("model: presets' parameter counts are within 2% of the published sizes") {
  // Published totals: Llama 2 paper / model cards (6.74B, 13.02B, 68.98B), Llama 3.1 model cards
  // (8.03B, 70.55B, 405.85B), GPT-3 paper (175B; 174.6B by the exact shape), Mixtral paper (46.7B),
  // BERT-large (335M), Neuron's GPT-3 23B and 46B (by name), Mixtral 8x22B (Mistral AI: 141B),
  // DeepSeek-V3's main model (its Hugging Face model card: 671B, without the 14B MTP module; the
  // layout preset, with multi-head latent attention, counts 671.03B).
  const std::pair<const char*, double> published[] = {
      {"llama2-7b", 6.74e9},      {"llama2-13b", 13.02e9},   {"llama2-70b", 68.98e9},
      {"llama3.1-8b", 8.03e9},    {"llama3.1-70b", 70.55e9}, {"llama3.1-405b", 405.8e9},
      {"gpt3-175b", 174.6e9},     {"mixtral-8x7b", 46.7e9},  {"bert-large", 335e6},
      {"gpt3-23b", 23e9},         {"gpt3-46b", 46e9},
      {"mixtral-8x22b", 141e9},   {"deepseek-v3-layout", 671e9},
  };
  for (const auto& [name, size] : published) {
    INFO(name);
    CHECK(config::load_model(name).parameters() == Approx(size).epsilon(0.02));
  }
}

TEST_CASE("model: the deepseek-v3-layout preset's parameters are DeepSeek-V3's, counted by hand") {
  // Per layer: MLA 187,107,328 (7168 x 1536 + 1536 x 24576 + 7168 x 576 + 512 x 32768 + 16384 x
  // 7168 + the latent norms 1536 + 512) and two RMSNorms 2 x 7168. MLPs: 3 dense layers of
  // 3 x 7168 x 18432 = 396,361,728; 58 MoE layers of a router 7168 x 256 = 1,835,008 and 257
  // experts (256 routed + 1 shared) of 3 x 7168 x 2048 = 44,040,192 each. Untied embedding and
  // head 2 x 129280 x 7168, final norm 7168.
  const double layer = 187107328.0 + 2 * 7168;
  const double dense = 396361728.0, moe = 1835008.0 + 257 * 44040192.0;
  const double total = 61 * layer + 3 * dense + 58 * moe + 2 * 129280.0 * 7168 + 7168;
  CHECK(config::load_model("deepseek-v3-layout").parameters() == total);
  CHECK(total == Approx(671.03e9).epsilon(1e-4));
}
