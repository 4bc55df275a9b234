#pragma once
// What is trained and how: model shape, training hyper-parameters, parallelism plan. Plain structs
// filled by the config layer. std::optional marks a field the user left null ("not published"):
// trnsim chooses it by its documented rule (replay::resolve_plan: the software's default, else the
// plainest plan that fits in memory), and reports the choice.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trnsim/enum_names.hpp"
#include "trnsim/hw/specs.hpp"

namespace trnsim::workload {

// Each enum's spellings (trnsim/enum_names.hpp) follow it.
enum class MlpKind : std::uint8_t { Gelu, SwiGlu };
constexpr auto enum_table(MlpKind) {
  return std::array{EnumName{MlpKind::Gelu, "gelu"}, EnumName{MlpKind::SwiGlu, "swiglu"}};
}
enum class NormKind : std::uint8_t { LayerNorm, RmsNorm };
constexpr auto enum_table(NormKind) {
  return std::array{EnumName{NormKind::LayerNorm, "layernorm"}, EnumName{NormKind::RmsNorm, "rmsnorm"}};
}
enum class ModelArch : std::uint8_t { Decoder, Encoder };  // GPT/Llama decoders, BERT encoder
constexpr auto enum_table(ModelArch) {
  return std::array{EnumName{ModelArch::Decoder, "decoder"}, EnumName{ModelArch::Encoder, "encoder"}};
}

// The attention's projections: multi-head attention (grouped-query when kv_heads < heads), or
// DeepSeek's multi-head latent attention (DeepSeek-AI 2024, DeepSeek-V2 and -V3 technical reports,
// arXiv 2405.04434 and 2412.19437; workload/model_math.hpp has the shapes).
enum class AttentionKind : std::uint8_t { Mha, Mla };
constexpr auto enum_table(AttentionKind) {
  return std::array{EnumName{AttentionKind::Mha, "mha"}, EnumName{AttentionKind::Mla, "mla"}};
}

// Configuration keys: kAttentionFields in src/config/workload_fields.cpp. Multi-head latent
// attention: queries through a low-rank latent of q_lora_rank, keys and values through a shared
// latent of kv_lora_rank plus one rotary key of qk_rope_head_dim per token shared by every head;
// each head's query and key are qk_nope_head_dim + qk_rope_head_dim wide, its value v_head_dim.
// The widths are unused (0) under Mha, whose head width is hidden / heads.
struct AttentionSpec {
  AttentionKind kind = AttentionKind::Mha;
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

// Configuration keys: kModelFields in src/config/workload_fields.cpp.
struct ModelSpec {
  std::string name;
  ModelArch arch = ModelArch::Decoder;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;      // = heads without grouped-query attention
  std::int64_t ffn_hidden = 0;
  std::int64_t vocab = 0;
  MlpKind mlp = MlpKind::Gelu;
  NormKind norm = NormKind::LayerNorm;
  bool learned_positions = false;  // GPT/BERT: learned position embedding; Llama: rotary
  bool tied_embeddings = false;
  std::int64_t max_positions = 0;  // learned position table size (0 = seq_len)
  std::string source;
  // Mixture of experts: experts per MLP layer and experts each token is routed to (top-k);
  // 0 and 0 = a dense model. The layout of a MoE layer (workload/moe_steps.hpp): a router, the
  // routed experts of width expert_ffn_hidden (0: ffn_hidden), shared_experts of the same width
  // that see every token; the first dense_layers layers are dense MLPs of width ffn_hidden.
  std::int64_t experts = 0;
  std::int64_t experts_per_token = 0;
  std::int64_t expert_ffn_hidden = 0;
  std::int64_t shared_experts = 0;
  std::int64_t dense_layers = 0;
  bool biases = false;             // linear layers and norms carry biases (GPT, BERT; not Llama)
  AttentionSpec attention{};  // an initializer, so that designated initializers may leave it out
  bool is_moe() const { return experts > 0; }
  bool is_mla() const { return attention.kind == AttentionKind::Mla; }
  std::int64_t expert_width() const { return expert_ffn_hidden > 0 ? expert_ffn_hidden : ffn_hidden; }
  // A head's query and key width, and its value width (equal under Mha).
  std::int64_t head_dim() const {
    return is_mla() ? attention.qk_nope_head_dim + attention.qk_rope_head_dim : hidden / heads;
  }
  std::int64_t v_head_dim() const { return is_mla() ? attention.v_head_dim : hidden / heads; }
  double parameters() const;       // total trainable parameters (workload/model_math.cpp)
};

// Training precision: training.dtype (README.md, "Configuration").
enum class Precision : std::uint8_t {
  Fp32,    // fp32 everywhere
  Tf32,    // tf32 matmuls, fp32 storage
  Bf16,    // bf16 compute, fp32 master weights and optimizer states
  Bf16Sr,  // bf16 weights and optimizer states with stochastic rounding, no fp32 copy
  Fp16,    // like Bf16 (mixed precision)
  Fp8,     // fp8 matmuls, bf16 activations, fp32 master weights and states
};
constexpr auto enum_table(Precision) {
  return std::array{EnumName{Precision::Fp32, "fp32"}, EnumName{Precision::Tf32, "tf32"},
                    EnumName{Precision::Bf16, "bf16"},  EnumName{Precision::Bf16Sr, "bf16-sr"},
                    EnumName{Precision::Fp16, "fp16"},  EnumName{Precision::Fp8, "fp8"}};
}
enum class Optimizer : std::uint8_t { Adam, AdamW, Sgd };
constexpr auto enum_table(Optimizer) {
  return std::array{EnumName{Optimizer::Adam, "adam"}, EnumName{Optimizer::AdamW, "adamw"},
                    EnumName{Optimizer::Sgd, "sgd"}};
}

// Configuration keys: kTrainingFields in src/config/workload_fields.cpp.
struct TrainingSpec {
  std::int64_t seq_len = 0;
  std::int64_t global_batch = 0;             // sequences per optimizer step
  std::optional<std::int64_t> micro_batch;   // sequences per micro-batch per pipeline
  Precision precision = Precision::Bf16;
  Optimizer optimizer = Optimizer::AdamW;
  double gradient_bucket_bytes = 25e6;       // DP all-reduce bucket (PyTorch DDP's default 25 MB)
  std::optional<hw::AttentionKernel> attention;  // unset: the hardware preset's calibration
  // Mixture of experts: the busiest expert's load over the mean (1 = perfectly balanced); the
  // simulated rank carries it (workload/moe_steps.hpp). capacity factor: an expert takes at most
  // capacity x the mean load (0: no limit, dropless); beyond it tokens are dropped, or every
  // expert is padded up to it, as the software says (SoftwareSpec::moe_pad_to_capacity).
  double moe_imbalance = 1;
  double moe_capacity_factor = 0;
};

enum class PipelineSchedule : std::uint8_t { GPipe, OneFOneB, Interleaved };
constexpr auto enum_table(PipelineSchedule) {
  return std::array{EnumName{PipelineSchedule::GPipe, "gpipe"}, EnumName{PipelineSchedule::OneFOneB, "1f1b"},
                    EnumName{PipelineSchedule::Interleaved, "1f1b-interleaved"}};
}
// Activation recomputation (README.md, "Configuration", parallelism.recompute):
// - Selective: Megatron-LM's selective recomputation, the attention core recomputed in the backward
//   (Korthikanti et al. 2022).
// - SelectiveOp: TorchTitan's selective activation checkpointing with option "op", a per-operator
//   save policy: of each layer's matmuls in forward order (q, k, v, o, then the MLP's gate, up,
//   down; fc1, fc2 for GELU) the 1st, 3rd, ... outputs are kept and the 2nd, 4th, ... recomputed,
//   the attention kernel's output and the tensor-parallel reduce-scatters' outputs kept, every
//   other operator (norms, rotary, activation, residual) recomputed. The odd/even matmul rule is
//   TorchTitan's `_save_list` / mm counter (torchtitan, models/llama3/infra/parallelize.py); the
//   software facts file says only "most matmul outputs kept, the rest recomputed", so the exact
//   rule is an assumption until checked against that source (layer_steps.cpp, memory.hpp).
// - Full: every layer's forward recomputed in its backward (only its input kept).
// - full-every-n (n = 2 .. 2^20): TorchTitan's selective with an integer n (its
//   `selective_ac_option` "n", any integer): every n-th layer of a pipeline rank (its layers
//   counted from 1 in chunk order, as TorchTitan counts the blocks it wraps in one process) fully
//   recomputed, the others keep all their activations (as none). n = 1 is `full`.
// The value carries n: Recompute(n + 2) is full-every-n, so the modes without an n keep their
// small values and the per-layer test below is one comparison. The spelling is not a fixed table
// (recompute_text / parse_recompute below), so the generic enum_names.hpp does not apply.
enum class Recompute : std::uint32_t { None, Selective, SelectiveOp, Full, FullEvery2, FullEvery3, FullEvery4 };
inline constexpr std::int64_t kMaxFullEvery = std::int64_t{1} << 20;
inline constexpr std::uint32_t kFullEveryOffset = 2;  // Recompute(n + 2) is full-every-n
// full-every-n for n in 2 .. kMaxFullEvery (the caller checks the range).
constexpr Recompute full_every(std::int64_t n) {
  return static_cast<Recompute>(static_cast<std::uint32_t>(n) + kFullEveryOffset);
}
// Every how many layers a layer is fully recomputed: 1 under Full, n under full-every-n, 0 otherwise.
constexpr std::int64_t full_recompute_interval(Recompute r) {
  const auto v = static_cast<std::uint32_t>(r);
  if (r == Recompute::Full) return 1;
  return v >= static_cast<std::uint32_t>(Recompute::FullEvery2) ? std::int64_t{v - kFullEveryOffset} : 0;
}
// What a recompute value may be, for messages ("expected ...").
inline constexpr std::string_view kRecomputeExpected =
    "none, selective, selective-op, full or full-every-N with N an integer from 2 to 1048576 (N = 1 is full)";
// The canonical spelling: "none", ..., "full-every-5".
inline std::string recompute_text(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::SelectiveOp: return "selective-op";
    case Recompute::Full: return "full";
    default: return "full-every-" + std::to_string(full_recompute_interval(r));
  }
}
// The value spelled `text` (exactly the canonical spelling: no sign, no leading zero), or empty.
inline std::optional<Recompute> parse_recompute(std::string_view text) {
  for (const Recompute r : {Recompute::None, Recompute::Selective, Recompute::SelectiveOp, Recompute::Full})
    if (text == recompute_text(r)) return r;
  constexpr std::string_view prefix = "full-every-";
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = text.substr(prefix.size());
  if (digits.empty() || digits.size() > 7 || digits[0] == '0') return std::nullopt;
  std::int64_t n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = 10 * n + (c - '0');
  }
  if (n < 2 || n > kMaxFullEvery) return std::nullopt;
  return full_every(n);
}
// The mode one layer runs under, given its position (from 1) among its pipeline rank's layers:
// full-every-n is Full on every n-th position and None elsewhere; the other modes apply alike.
constexpr Recompute layer_recompute(Recompute r, std::int64_t position) {
  const std::int64_t n = full_recompute_interval(r);
  if (n <= 1) return r;
  return position % n == 0 ? Recompute::Full : Recompute::None;
}

// Configuration keys: kParallelismFields in src/config/workload_fields.cpp.
struct ParallelismSpec {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::optional<bool> sequence_parallel;
  std::optional<int> zero;                      // 0 none; 1, 2 ZeRO-1, ZeRO-2; 3 FSDP (ZeRO-3)
  std::optional<PipelineSchedule> schedule;
  std::optional<std::int64_t> virtual_stages;   // interleaved 1F1B model chunks per rank
  std::optional<Recompute> recompute;
  // FSDP prefetch depth the plan rule chose when the software's fsdp_prefetch_units is "memory"
  // (replay/plan_rule.cpp: the deepest that fits the rank's HBM). Not a configuration key: unset,
  // the software's own number applies (Plan::prefetch_depth).
  std::optional<std::int64_t> fsdp_prefetch;
  // Fastest-varying first: tp, dp, pp, and optionally cp and ep; "tp,dp,pp" = "tp,cp,ep,dp,pp"
  // (plan.hpp, RankLayout).
  std::string rank_order = "tp,dp,pp";
  // Expert parallelism: the routed experts sharded over ep ranks of the data-parallel group (ep
  // divides dp and the experts); the EP group is the ep consecutive DP coordinates, i.e. the rank
  // order tp, ep, dp, pp by default (plan.hpp, RankLayout).
  std::int64_t ep = 1;
  // Context parallelism: each sequence split over cp ranks that hold the same parameters (ring
  // attention, or an all-gather of K/V, as SoftwareSpec::cp_attention says; workload/
  // context_steps.hpp). The CP group is the cp coordinates of its own axis of the rank order
  // (by default just faster than EP and DP: tp, cp, ep, dp, pp); gradients are reduced over
  // dp x cp (plan.hpp).
  std::int64_t cp = 1;
};

}  // namespace trnsim::workload
