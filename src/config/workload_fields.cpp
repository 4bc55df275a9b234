// The field tables of the workload specs (include/trnsim/workload/specs.hpp): a model object
// (configs/models/*.json, or inline in an experiment), an experiment's training and parallelism.
// Checks across these objects are workload's (workload::check_model, check_plan).
#include "field_table.hpp"
#include "parse.hpp"
#include "trnsim/units.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::config::detail {
using namespace trnsim::units;  // unit factors of the configuration keys
namespace {

using workload::AttentionSpec;
using workload::ModelSpec;
using workload::ParallelismSpec;
using workload::TrainingSpec;

// Ranges generous for any model to come (the largest published: ~10^2 layers, hidden ~2.6 x 10^4,
// vocabularies ~2.6 x 10^5), tight enough to keep products of sizes far inside int64.
constexpr Range kLayers{1, 1e5};
constexpr Range kWidth{1, 1 << 24};         // hidden, ffn_hidden, vocab, heads, positions
constexpr Range kExperts{0, 1 << 16};
constexpr Range kTokens{1, 1 << 24};        // seq_len, global_batch

// Multi-head latent attention's widths exist only under kind "mla".
constexpr bool is_mla(const AttentionSpec& a) { return a.kind == workload::AttentionKind::Mla; }
constexpr Range kLatent{1, 1 << 24};

constexpr Field<AttentionSpec> kAttentionFields[] = {
    documentation<AttentionSpec>(),
    value<&AttentionSpec::kind>("kind", "mha (multi-head, grouped-query with kv_heads) or mla (multi-head latent)")
        .or_default(workload::AttentionKind::Mha),
    integer<&AttentionSpec::q_lora_rank>("q_lora_rank", kLatent, "query latent width").only_if(is_mla),
    integer<&AttentionSpec::kv_lora_rank>("kv_lora_rank", kLatent, "key/value latent width").only_if(is_mla),
    integer<&AttentionSpec::qk_nope_head_dim>("qk_nope_head_dim", kLatent, "per-head query/key width without rotary")
        .only_if(is_mla),
    integer<&AttentionSpec::qk_rope_head_dim>("qk_rope_head_dim", kLatent, "rotary query/key width (one key per token)")
        .only_if(is_mla),
    integer<&AttentionSpec::v_head_dim>("v_head_dim", kLatent, "per-head value width").only_if(is_mla),
};

constexpr Field<ModelSpec> kModelFields[] = {
    documentation<ModelSpec>(),
    value<&ModelSpec::name>("name", "model name"),
    source<&ModelSpec::source>(),
    value<&ModelSpec::arch>("arch", "decoder (GPT, Llama) or encoder (BERT)").or_default(workload::ModelArch::Decoder),
    integer<&ModelSpec::layers>("layers", kLayers, "transformer layers"),
    integer<&ModelSpec::hidden>("hidden", kWidth, "model width"),
    integer<&ModelSpec::heads>("heads", kWidth, "attention heads"),
    integer<&ModelSpec::kv_heads>("kv_heads", kWidth, "key/value heads (absent: heads, no grouped-query attention)")
        .or_default_from([](const ModelSpec& m) { return static_cast<double>(m.heads); }),
    integer<&ModelSpec::ffn_hidden>("ffn_hidden", kWidth, "MLP width"),
    integer<&ModelSpec::vocab>("vocab", kWidth, "vocabulary size"),
    value<&ModelSpec::mlp>("mlp", "gelu or swiglu"),
    value<&ModelSpec::norm>("norm", "layernorm or rmsnorm"),
    value<&ModelSpec::learned_positions>("learned_positions", "learned position embedding (GPT, BERT)").or_default(false),
    value<&ModelSpec::tied_embeddings>("tied_embeddings", "input and output embeddings shared").or_default(false),
    integer<&ModelSpec::max_positions>("max_positions", {0, 1 << 24}, "learned position table size (0: seq_len)")
        .or_default(0),
    value<&ModelSpec::biases>("biases", "linear layers and norms carry biases").or_default(false),
    integer<&ModelSpec::experts>("experts", kExperts, "experts per MLP layer (0: dense)").or_default(0),
    integer<&ModelSpec::experts_per_token>("experts_per_token", kExperts, "top-k routing").or_default(0),
    // Written back only when set, so that a model without them reads as it always did.
    integer<&ModelSpec::expert_ffn_hidden>("expert_ffn_hidden", {0, 1 << 24}, "routed and shared experts' MLP width (0: ffn_hidden)")
        .optional([](const ModelSpec& m) { return m.expert_ffn_hidden != 0; }),
    integer<&ModelSpec::shared_experts>("shared_experts", kExperts, "experts every token passes through")
        .optional([](const ModelSpec& m) { return m.shared_experts != 0; }),
    integer<&ModelSpec::dense_layers>("dense_layers", {0, 1e5}, "first layers with a dense MLP of width ffn_hidden")
        .optional([](const ModelSpec& m) { return m.dense_layers != 0; }),
    // Written back only under multi-head latent attention, so that other models read as before.
    object<&ModelSpec::attention, kAttentionFields>("attention", "the attention's projections (absent: mha)")
        .optional([](const ModelSpec& m) { return m.is_mla(); }),
};

constexpr Field<TrainingSpec> kTrainingFields[] = {
    documentation<TrainingSpec>(),
    integer<&TrainingSpec::seq_len>("seq_len", kTokens, "tokens per sequence"),
    integer<&TrainingSpec::global_batch>("global_batch", kTokens, "sequences per optimizer step"),
    integer<&TrainingSpec::micro_batch>("micro_batch", kDegree, "sequences per micro-batch").nullable(),
    value<&TrainingSpec::precision>("dtype", "fp32, tf32, bf16, bf16-sr, fp16 or fp8").or_default(workload::Precision::Bf16),
    value<&TrainingSpec::optimizer>("optimizer", "adam, adamw or sgd").or_default(workload::Optimizer::AdamW),
    // PyTorch DDP's default bucket, 25 MB (torch.nn.parallel.DistributedDataParallel bucket_cap_mb).
    number<&TrainingSpec::gradient_bucket_bytes>("gradient_bucket_MB", kMB, {1e-6, 1e6}, "DP all-reduce bucket")
        .or_default(25),
    value<&TrainingSpec::attention>("attention", "flash or materialized (null: the hardware's calibration)").nullable(),
    // Mixture of experts (written back only when set).
    number<&TrainingSpec::moe_imbalance>("moe_imbalance", 1, {1, 1e3}, "busiest expert's load over the mean")
        .optional([](const TrainingSpec& t) { return t.moe_imbalance != 1; }),
    number<&TrainingSpec::moe_capacity_factor>("moe_capacity_factor", 1, {0, 1e3},
                                                 "expert capacity over the mean load (0: no limit)")
        .optional([](const TrainingSpec& t) { return t.moe_capacity_factor != 0; }),
};

constexpr Field<ParallelismSpec> kParallelismFields[] = {
    documentation<ParallelismSpec>(),
    integer<&ParallelismSpec::tp>("tp", kDegree, "tensor-parallel degree").or_default(1),
    integer<&ParallelismSpec::pp>("pp", kDegree, "pipeline stages").or_default(1),
    integer<&ParallelismSpec::dp>("dp", kDegree, "data-parallel degree"),
    value<&ParallelismSpec::sequence_parallel>("sequence_parallel", "Megatron sequence parallelism").nullable(),
    integer<&ParallelismSpec::zero>("zero", {0, 3},
                                    "ZeRO stage: 0 off, 1 optimizer states, 2 and gradients, 3 and parameters (FSDP)")
        .nullable(),
    value<&ParallelismSpec::schedule>("schedule", "gpipe, 1f1b or 1f1b-interleaved").nullable(),
    integer<&ParallelismSpec::virtual_stages>("virtual_stages", kDegree, "model chunks per rank (interleaved)").nullable(),
    value<&ParallelismSpec::recompute>("recompute", "none, selective, selective-op, full or full-every-N (N 2 to 2^20)")
        .nullable(),
    value<&ParallelismSpec::rank_order>("rank_order", "dimensions fastest first").or_default("tp,dp,pp"),
    integer<&ParallelismSpec::ep>("ep", kDegree, "expert-parallel degree, a divisor of dp (experts sharded)")
        .optional([](const ParallelismSpec& p) { return p.ep != 1; }),
    integer<&ParallelismSpec::cp>("cp", kDegree, "context-parallel degree (each sequence split over cp ranks)")
        .optional([](const ParallelismSpec& p) { return p.cp != 1; }),
};

}  // namespace

workload::ModelSpec parse_model(const json& value, const std::string& file, const std::string& path) {
  const ModelSpec m = read_struct<ModelSpec>(ObjectReader(value, file, path), kModelFields);
  in_file(file, [&] { workload::check_model(m, path); });
  return m;
}

workload::TrainingSpec parse_training(ObjectReader r) {
  return read_struct<TrainingSpec>(std::move(r), kTrainingFields);
}

workload::ParallelismSpec parse_parallelism(ObjectReader r) {
  return read_struct<ParallelismSpec>(std::move(r), kParallelismFields);
}

json to_json(const workload::ModelSpec& model) { return write_fields<ModelSpec>(model, kModelFields); }
json to_json(const workload::TrainingSpec& training) { return write_fields<TrainingSpec>(training, kTrainingFields); }
json to_json(const workload::ParallelismSpec& parallelism) {
  return write_fields<ParallelismSpec>(parallelism, kParallelismFields);
}

bool workload_omitted_at_default(std::string_view path, std::string_view key) {
  if (path == "/model") return written_only_when_set<ModelSpec>(kModelFields, key);
  if (path == "/training") return written_only_when_set<TrainingSpec>(kTrainingFields, key);
  if (path == "/parallelism") return written_only_when_set<ParallelismSpec>(kParallelismFields, key);
  return false;
}

}  // namespace trnsim::config::detail
