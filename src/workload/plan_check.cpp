// The one validator of a model shape and a parallel plan (contracts in plan.hpp). The config layer
// runs it on every experiment, with unpublished fields still null; make_plan runs it again on the
// resolved plan. Messages start with the JSON path of the field that is wrong.
#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::workload {
namespace {

// `rule` is the broken rule without the values (InputError::reason), for counting rejected plans.
[[noreturn]] void fail(std::string_view path, const std::string& what, std::string rule = {}) {
  throw InputError(fmt::format("{}: {}", path, what), std::move(rule));
}

void require_positive(std::int64_t v, std::string_view path) {
  if (v < 1) fail(path, fmt::format("must be >= 1, found {}", v), fmt::format("{} must be >= 1", path));
}

// Expert parallelism and the MoE training knobs (specs.hpp, moe_steps.hpp).
void check_experts(const ModelSpec& m, const TrainingSpec& t, const ParallelismSpec& p) {
  require_positive(p.ep, "/parallelism/ep");
  if (!m.is_moe()) {
    if (p.ep != 1)
      fail("/parallelism/ep", fmt::format("expert parallelism needs a mixture-of-experts model (experts > 0), found "
                                          "ep {} on a dense model",
                                          p.ep),
           "ep > 1 on a dense model");
    if (t.moe_imbalance != 1)
      fail("/training/moe_imbalance", "a dense model has no experts to balance: expected 1 (or absent)",
           "moe_imbalance on a dense model");
    if (t.moe_capacity_factor != 0)
      fail("/training/moe_capacity_factor", "a dense model has no expert capacity: expected 0 (or absent)",
           "moe_capacity_factor on a dense model");
    return;
  }
  if (p.dp % p.ep != 0)
    fail("/parallelism/ep", fmt::format("{} does not divide dp ({}): the EP group is part of the data-parallel group",
                                        p.ep, p.dp),
         "ep does not divide dp");
  if (m.experts % p.ep != 0)
    fail("/parallelism/ep", fmt::format("{} does not divide the experts ({})", p.ep, m.experts),
         "ep does not divide the experts");
  if (m.expert_width() % p.tp != 0)
    fail("/parallelism/tp", fmt::format("{} does not divide the expert width ({})", p.tp, m.expert_width()),
         "tp does not divide the expert width");
  // Megatron-Core asserts sequence parallelism for MoE with tensor parallelism (its token
  // dispatcher expects sequence-sharded tokens); trnsim models that dispatcher only.
  if (p.tp > 1 && p.sequence_parallel && !*p.sequence_parallel)
    fail("/parallelism/sequence_parallel",
         fmt::format("a mixture-of-experts model with tp {} needs sequence parallelism (the token dispatcher works on "
                     "sequence-sharded tokens, as Megatron-Core requires): expected true, found false",
                     p.tp),
         "MoE with tp > 1 needs sequence parallelism");
  if (t.moe_capacity_factor > 0 && t.moe_capacity_factor < 1)
    fail("/training/moe_capacity_factor",
         fmt::format("expected 0 (no capacity limit) or at least 1 (an expert takes at least its mean load), found {}",
                     t.moe_capacity_factor),
         "moe_capacity_factor in (0, 1)");
}

// Context parallelism (specs.hpp, context_steps.hpp): the sequence splits into cp equal parts;
// a causal model's load balancing splits it into 2 cp chunks (each rank holds chunks i and
// 2 cp - 1 - i), so 2 cp must divide it; under sequence parallelism each rank's part splits over tp.
void check_context(const ModelSpec& m, const TrainingSpec& t, const ParallelismSpec& p) {
  require_positive(p.cp, "/parallelism/cp");
  if (p.cp == 1) return;
  const bool causal = m.arch == ModelArch::Decoder;
  const std::int64_t parts = causal ? 2 * p.cp : p.cp;
  if (t.seq_len % parts != 0)
    fail("/parallelism/cp",
         causal ? fmt::format("2 x cp = {} does not divide seq_len ({}): causal load balancing gives each of the {} "
                              "ranks two mirrored chunks of the sequence",
                              parts, t.seq_len, p.cp)
                : fmt::format("{} does not divide seq_len ({})", p.cp, t.seq_len),
         "cp does not split seq_len evenly");
  if (p.sequence_parallel.value_or(false) && (t.seq_len / p.cp) % p.tp != 0)
    fail("/parallelism/cp", fmt::format("tp ({}) does not divide the rank's seq_len / cp = {} / {} under sequence "
                                        "parallelism",
                                        p.tp, t.seq_len, p.cp),
         "sequence parallelism: tp does not divide seq_len / cp");
}

}  // namespace

namespace {

std::vector<std::string> rank_order_parts(const std::string& order) {
  std::vector<std::string> parts;
  std::stringstream in(order);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

}  // namespace

void check_rank_order(const std::string& order) {
  std::vector<std::string> parts = rank_order_parts(order);
  std::sort(parts.begin(), parts.end());
  // tp, dp and pp, with cp and ep optional (each at most once).
  std::vector<std::string> rest;
  for (const auto& p : parts) {
    if (p != "cp" && p != "ep") rest.push_back(p);
  }
  const auto count = [&](const char* name) { return std::count(parts.begin(), parts.end(), name); };
  if (rest != std::vector<std::string>{"dp", "pp", "tp"} || count("cp") > 1 || count("ep") > 1)
    fail("/parallelism/rank_order",
         fmt::format("expected tp, dp and pp once each and cp, ep at most once each, comma-separated, found \"{}\"",
                     order));
}

std::string full_rank_order(const std::string& order) {
  std::vector<std::string> parts = rank_order_parts(order);
  const auto find = [&](const char* name) { return std::find(parts.begin(), parts.end(), name); };
  // ep just before dp; cp just before the faster of ep and dp (plan.hpp, RankLayout).
  if (find("ep") == parts.end()) parts.insert(find("dp"), "ep");
  if (find("cp") == parts.end()) parts.insert(std::min(find("ep"), find("dp")), "cp");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

void check_model(const ModelSpec& m, std::string_view path) {
  const auto at = [&](std::string_view key) { return fmt::format("{}/{}", path, key); };
  require_positive(m.layers, at("layers"));
  require_positive(m.hidden, at("hidden"));
  require_positive(m.heads, at("heads"));
  require_positive(m.ffn_hidden, at("ffn_hidden"));
  require_positive(m.vocab, at("vocab"));
  if (m.hidden % m.heads != 0) fail(at("heads"), fmt::format("{} does not divide hidden ({})", m.heads, m.hidden));
  const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (kv > m.heads || m.heads % kv != 0) fail(at("kv_heads"), fmt::format("{} does not divide heads ({})", kv, m.heads));
  if (m.experts == 0 && m.experts_per_token != 0)
    fail(at("experts_per_token"),
         fmt::format("a dense model (experts 0) routes to no experts, found {}", m.experts_per_token));
  if (m.experts > 0 && (m.experts_per_token < 1 || m.experts_per_token > m.experts))
    fail(at("experts_per_token"),
         fmt::format("expected an integer in [1, {}] (experts), found {}", m.experts, m.experts_per_token));
  if (m.experts == 0) {
    // The layout keys of a mixture of experts mean nothing on a dense model: an error, not ignored.
    const std::pair<const char*, std::int64_t> moe_only[] = {
        {"expert_ffn_hidden", m.expert_ffn_hidden}, {"shared_experts", m.shared_experts}, {"dense_layers", m.dense_layers}};
    for (const auto& [key, v] : moe_only) {
      if (v != 0) fail(at(key), fmt::format("a dense model (experts 0) has no experts, found {}", v));
    }
  }
  if (m.experts > 0 && m.dense_layers >= m.layers)
    fail(at("dense_layers"), fmt::format("expected fewer than layers ({}) so that a MoE layer remains, found {}",
                                         m.layers, m.dense_layers));
  if (m.max_positions > 0 && !m.learned_positions)
    fail(at("max_positions"), "a position table size needs learned_positions: true");
  if (m.is_mla()) {
    // Latent attention caches one latent per token for every head (no grouping), rotates its
    // decoupled rotary part, and its projections carry no biases (model_math.hpp): other shapes
    // are refused rather than priced as something else.
    if (kv != m.heads)
      fail(at("kv_heads"), fmt::format("multi-head latent attention has one key/value head per query head ({}), found {}",
                                       m.heads, kv));
    if (m.learned_positions) fail(at("learned_positions"), "multi-head latent attention is rotary: expected false, found true");
    if (m.biases) fail(at("biases"), "multi-head latent attention's projections carry no biases: expected false, found true");
  }
}

void check_plan(const ModelSpec& m, const TrainingSpec& t, const ParallelismSpec& p, std::int64_t total_ranks,
                std::string_view ranks_detail) {
  require_positive(t.seq_len, "/training/seq_len");
  require_positive(t.global_batch, "/training/global_batch");
  if (t.micro_batch) require_positive(*t.micro_batch, "/training/micro_batch");
  require_positive(p.tp, "/parallelism/tp");
  require_positive(p.pp, "/parallelism/pp");
  require_positive(p.dp, "/parallelism/dp");
  if (p.virtual_stages) require_positive(*p.virtual_stages, "/parallelism/virtual_stages");
  if (p.zero && (*p.zero < 0 || *p.zero > 3))
    fail("/parallelism/zero", fmt::format("expected 0, 1, 2 or 3 (FSDP), found {}", *p.zero), "zero must be 0 to 3");
  check_rank_order(p.rank_order);

  // Megatron-style TP splits attention heads; KV heads are split too, or replicated when TP
  // exceeds them (GQA), which needs TP to be a multiple of kv_heads.
  const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  if (m.heads % p.tp != 0)
    fail("/parallelism/tp", fmt::format("{} does not divide heads ({})", p.tp, m.heads), "tp does not divide heads");
  if (kv % p.tp != 0 && p.tp % kv != 0)
    fail("/parallelism/tp", fmt::format("{} neither divides kv_heads ({}) nor is a multiple of it", p.tp, kv),
         "tp neither divides kv_heads nor is a multiple of it");
  if (m.ffn_hidden % p.tp != 0)
    fail("/parallelism/tp", fmt::format("{} does not divide ffn_hidden ({})", p.tp, m.ffn_hidden),
         "tp does not divide ffn_hidden");

  check_experts(m, t, p);
  check_context(m, t, p);

  if (p.cp > 1) {
    const std::int64_t ranks = p.tp * p.cp * p.pp * p.dp;
    if (total_ranks > 0 && ranks != total_ranks)
      fail("/parallelism", fmt::format("tp x cp x pp x dp = {} x {} x {} x {} = {} does not match the cluster's {} ranks{}",
                                       p.tp, p.cp, p.pp, p.dp, ranks, total_ranks,
                                       ranks_detail.empty() ? std::string() : fmt::format(" ({})", ranks_detail)),
           "tp x cp x pp x dp does not match the cluster's ranks");
  }
  const std::int64_t ranks = p.tp * p.pp * p.dp;
  if (total_ranks > 0 && ranks != total_ranks && p.cp == 1)
    fail("/parallelism", ranks_detail.empty()
                             ? fmt::format("tp x pp x dp = {} x {} x {} = {} does not match the cluster's {} ranks",
                                           p.tp, p.pp, p.dp, ranks, total_ranks)
                             : fmt::format("tp x pp x dp = {} x {} x {} = {} does not match the cluster's ranks "
                                           "({} = {})",
                                           p.tp, p.pp, p.dp, ranks, total_ranks, ranks_detail),
         "tp x pp x dp does not match the cluster's ranks");

  if (p.pp > m.layers)
    fail("/parallelism/pp", fmt::format("{} pipeline stages exceed layers ({})", p.pp, m.layers), "pp exceeds layers");
  if (p.virtual_stages) {
    const std::int64_t v = *p.virtual_stages;
    // Chunks may differ by one layer (the split rule in plan.hpp) but none may be empty.
    if (p.pp * v > m.layers)
      fail("/parallelism/virtual_stages",
           fmt::format("pp x virtual_stages = {} x {} = {} model chunks exceed layers ({}): every chunk needs a layer",
                       p.pp, v, p.pp * v, m.layers),
           "pp x virtual_stages exceeds layers");
    if (v > 1 && p.schedule && *p.schedule != PipelineSchedule::Interleaved)
      fail("/parallelism/schedule", fmt::format("virtual_stages {} needs schedule \"1f1b-interleaved\"", v),
           "virtual_stages > 1 needs schedule 1f1b-interleaved");
  }
  if (p.sequence_parallel.value_or(false) && t.seq_len % p.tp != 0)
    fail("/parallelism/sequence_parallel", fmt::format("tp ({}) does not divide seq_len ({})", p.tp, t.seq_len),
         "sequence parallelism: tp does not divide seq_len");

  const std::int64_t per_step = p.dp * t.micro_batch.value_or(1);
  if (t.global_batch % per_step != 0)
    fail("/training/global_batch",
         t.micro_batch ? fmt::format("{} is not divisible by dp x micro_batch = {} x {} = {}", t.global_batch, p.dp,
                                     *t.micro_batch, per_step)
                       : fmt::format("{} is not divisible by dp ({})", t.global_batch, p.dp),
         "global_batch is not divisible by dp x micro_batch");
  if (t.micro_batch && p.virtual_stages && *p.virtual_stages > 1 && p.schedule == PipelineSchedule::Interleaved) {
    const std::int64_t micro_batches = t.global_batch / per_step;
    if (micro_batches % p.pp != 0)
      fail("/training/global_batch", fmt::format("1f1b-interleaved needs the micro-batches per pipeline ({}) to be a "
                                                 "multiple of pp ({})",
                                                 micro_batches, p.pp),
           "1f1b-interleaved: micro-batches per pipeline not a multiple of pp");
  }

  if (m.learned_positions && m.max_positions > 0 && t.seq_len > m.max_positions)
    fail("/training/seq_len", fmt::format("{} exceeds the model's learned position table (max_positions {})",
                                          t.seq_len, m.max_positions),
         "seq_len exceeds the learned position table");
}

}  // namespace trnsim::workload
