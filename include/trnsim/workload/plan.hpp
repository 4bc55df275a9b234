#pragma once
// The parallelism plan, resolved and validated: plain values the builder and the memory model use,
// the rank layout (which real rank holds which TP/DP/PP coordinate), and precision byte sizes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/hw/specs.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

// A TrainingSpec and ParallelismSpec with every "not published" field chosen, and what was chosen.
// The rule that chooses them needs the software preset and memory estimates of whole plans, so it
// lives above this layer: replay::resolve_plan (include/trnsim/replay/plan_rule.hpp).
struct ResolvedPlan {
  TrainingSpec training;
  ParallelismSpec parallelism;
  std::vector<std::string> choices;  // "/parallelism/zero = 0 (rule: ...)", one per unset field
};

// Resolved plan in plain values.
struct Plan {
  std::int64_t tp = 1, pp = 1, dp = 1;
  std::int64_t ep = 1;               // expert-parallel ranks, a divisor of dp (specs.hpp)
  std::int64_t cp = 1;               // context-parallel ranks: each sequence split over cp (specs.hpp)
  std::int64_t micro_batch = 1;      // sequences per micro-batch
  std::int64_t micro_batches = 1;    // micro-batches per pipeline per step
  std::int64_t virtual_stages = 1;   // model chunks per pipeline rank
  bool sequence_parallel = false;
  int zero = 0;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  Recompute recompute = Recompute::Selective;
  std::optional<std::int64_t> fsdp_prefetch;  // ParallelismSpec::fsdp_prefetch
  // FSDP prefetch depth: the plan rule's choice, else the software's fsdp_prefetch_units; an
  // unresolved "memory" (kPrefetchAsMemoryAllows, a plan built without the rule) counts as
  // FSDP2's 1.
  std::int64_t prefetch_depth(std::int64_t software_units) const {
    if (fsdp_prefetch) return *fsdp_prefetch;
    return software_units >= 0 ? software_units : 1;
  }
  std::string rank_order = "tp,dp,pp";
  std::int64_t ranks() const { return tp * cp * pp * dp; }
  // The ranks that hold the same parameters (one stage, one TP shard): dp x cp. Gradients are
  // reduced, and ZeRO / FSDP shard, over them (as Megatron-LM and TorchTitan do under CP).
  std::int64_t grad_dp() const { return dp * cp; }
  // Tokens of one sequence on one rank.
  std::int64_t local_seq(std::int64_t seq_len) const { return seq_len / cp; }
  // Model chunks ("virtual stages") in pipeline order: chunk k lives on stage k mod pp.
  std::int64_t chunks() const { return pp * virtual_stages; }
  // Layers of chunk k and the global index of its first layer, by the split rule below.
  std::int64_t chunk_layers(std::int64_t layers, std::int64_t chunk) const;
  std::int64_t chunk_first_layer(std::int64_t layers, std::int64_t chunk) const;
  // Layers held by pipeline stage `stage`: its chunks stage, stage + pp, ... added up.
  std::int64_t stage_layers(std::int64_t layers, std::int64_t stage) const;
  // Layer `layer` of virtual stage `chunk`: its position, from 1, among the layers of its pipeline
  // rank taken chunk by chunk (chunk mod pp, + pp, ...), and the recompute mode it runs under
  // (layer_recompute in specs.hpp: every n-th position under full-every-n).
  std::int64_t stage_position(std::int64_t layers, std::int64_t chunk, std::int64_t layer) const;
  Recompute layer_mode(std::int64_t layers, std::int64_t chunk, std::int64_t layer) const {
    return layer_recompute(recompute, stage_position(layers, chunk, layer));
  }
};

// Layer split over the C = pp x virtual_stages model chunks. With q = floor(L / C) and
// r = L mod C, every chunk gets q layers and the r remaining layers go one each to the chunks
// C-2, C-3, ..., C-1-r: chunk k has q + 1 layers when C-1-r <= k < C-1, else q. So:
// - The last chunk (final norm, LM head and loss: the heaviest extra work, and the logits
//   buffers) always has the fewer layers; the first chunk (embedding) too unless r = C - 1.
//   Llama 3 trimmed its first and last stages the same way (arXiv 2407.21783, section 3.3.2).
// - Among the middle chunks the extra layers go to the later ones: under 1F1B an earlier stage
//   holds more micro-batches in flight (pp - stage), so a later stage is the cheaper place for
//   one more layer's activations; compute balance is the same either way.
// - When C divides L every chunk has L / C layers (the even split). C > L is an error.
// Llama 3.1 405B (126 layers) on pp 16: chunks 1..14 have 8 layers, chunks 0 and 15 have 7.

// Contract: throws InputError "PATH/KEY: ..." (PATH "/model" in an experiment, "" in a model
// file) unless the shape is consistent: sizes >= 1, heads divides hidden, kv_heads (0 = heads)
// divides heads, experts_per_token in [1, experts] for a mixture of experts and 0 for a dense
// model, a position table size only with learned positions.
void check_model(const ModelSpec& model, std::string_view path = "/model");

// Contract: throws InputError naming the JSON path ("/parallelism/tp: 12 does not divide heads
// (32)", "/parallelism/pp: ... exceed layers") when the plan cannot run `model` on the batch and
// on `total_ranks` ranks (0: not checked; `ranks_detail`, e.g. "1 trn1.32xlarge x 32 ranks each",
// says where they come from). A field left unset ("not published") is skipped, so this is the
// one validator both of a file with unpublished fields (the config layer adds the file name) and
// of the resolved plan (make_plan). pp x virtual_stages need not divide the layers (see the split
// rule above), but each chunk needs at least one layer.
void check_plan(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& parallelism,
                std::int64_t total_ranks, std::string_view ranks_detail = {});

// Contract: throws InputError ("/parallelism/rank_order: ...") unless `order` names tp, dp and pp
// once each and cp and ep at most once each, comma-separated.
void check_rank_order(const std::string& order);
// The order with cp and ep in place (RankLayout's rule below): "tp,dp,pp" -> "tp,cp,ep,dp,pp".
// Contract: `order` passed check_rank_order.
std::string full_rank_order(const std::string& order);

// Contract: check_model and check_plan, then throws InputError naming the JSON path
// ("/parallelism/schedule: not resolved") when a field is unset.
Plan make_plan(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& parallelism,
               std::int64_t total_ranks);

// Rank numbering: the order string lists dimensions fastest first; for "tp,dp,pp",
// rank = tp_i + tp * (dp_i + dp * pp_i).
// Context parallelism widens the DP dimension of the layout to cp x dp coordinates, CP fastest:
// coordinate d holds cp_i = d mod cp of data-parallel replica d / cp. So Coord::dp, dp() and
// dp_group span the cp x dp ranks that hold the same parameters (the gradient group), and the CP
// group of a rank is the cp coordinates around it. At cp = 1 every coordinate is as before.
// Expert parallelism splits the data-parallel replica index r = d / cp: ep_i = r mod ep, and the
// outer DP index dp_o = r / ep, so the EP group of a rank is the ep replicas around it with its
// cp_i, and the data-parallel group of its experts (expert-DP) the cp x dp / ep coordinates with
// the same ep_i.
// The order may name cp and ep as dimensions of their own ("tp,cp,ep,dp,pp", where "dp" is the
// outer index dp_o); one it leaves out takes its default place: cp just before the faster of ep
// and dp, ep just before dp. So the default "tp,dp,pp" is "tp,cp,ep,dp,pp" (TP, CP, EP, DP, PP),
// and "tp,dp,cp,pp" puts each CP group at stride tp x dp. Only the numbering of ranks changes:
// which coordinates form a group is the same under every order.
class RankLayout {
 public:
  struct Coord {
    std::int64_t tp = 0, dp = 0, pp = 0;
  };
  // Contract: throws InputError as check_rank_order does; `dp` is the layout's cp x dp
  // coordinates; ep divides dp / cp (check_plan's).
  RankLayout(std::int64_t tp, std::int64_t dp, std::int64_t pp, const std::string& order, std::int64_t ep = 1,
             std::int64_t cp = 1);
  // Inline, without a division where cp and ep are 1: group sets list every rank of the cluster
  // (at 65,536 chips a build enumerated a million ranks per build through it).
  std::int32_t rank(std::int64_t tp_i, std::int64_t dp_i, std::int64_t pp_i) const {
    const std::int64_t d = cp_ == 1 && ep_ == 1 ? dp_i * stride_dp_ : dp_offset(dp_i);
    return static_cast<std::int32_t>(tp_i * stride_tp_ + d + pp_i * stride_pp_);
  }
  Coord coord(std::int32_t rank) const;
  std::int32_t size() const { return static_cast<std::int32_t>(tp_ * dp_ * pp_); }
  // Groups in ring order (increasing coordinate along the group's dimension).
  std::vector<std::int32_t> tp_group(std::int64_t dp_i, std::int64_t pp_i) const;
  std::vector<std::int32_t> dp_group(std::int64_t tp_i, std::int64_t pp_i) const;
  // The same groups appended to `out` (a group set's list, without a vector per group).
  void append_tp_group(std::int64_t dp_i, std::int64_t pp_i, std::vector<std::int32_t>& out) const;
  void append_dp_group(std::int64_t tp_i, std::int64_t pp_i, std::vector<std::int32_t>& out) const;
  // The EP group of DP coordinate dp_i (ep ranks) and its experts' data-parallel group
  // (dp() / ep ranks: cp x dp / ep).
  std::vector<std::int32_t> ep_group(std::int64_t tp_i, std::int64_t dp_i, std::int64_t pp_i) const;
  std::vector<std::int32_t> expert_dp_group(std::int64_t tp_i, std::int64_t dp_i, std::int64_t pp_i) const;
  // The CP group of coordinate dp_i (cp ranks, in ring order), and the coordinate its ring sends to.
  std::vector<std::int32_t> cp_group(std::int64_t tp_i, std::int64_t dp_i, std::int64_t pp_i) const;
  std::int64_t cp_next(std::int64_t dp_i) const { return dp_i - dp_i % cp_ + (dp_i % cp_ + 1) % cp_; }
  std::int64_t ep() const { return ep_; }
  std::int64_t cp() const { return cp_; }
  std::int64_t tp() const { return tp_; }
  std::int64_t dp() const { return dp_; }
  std::int64_t pp() const { return pp_; }

 private:
  // The rank offset of DP coordinate dp_i (cp_i, ep_i and dp_o, each times its stride).
  std::int64_t dp_offset(std::int64_t dp_i) const;

  std::int64_t tp_, dp_, pp_, ep_, cp_;
  // Strides of tp_i, cp_i, ep_i, dp_o and pp_i in the rank number.
  std::int64_t stride_tp_ = 1, stride_cp_ = 1, stride_ep_ = 1, stride_dp_ = 1, stride_pp_ = 1;
};

// EP groups of the first TP rank and stage (the others are the same by the layout's regularity)
// whose ranks sit on more than one instance: their all-to-alls cross EFA. 0 when ep = 1 or
// ranks_per_instance <= 0. O(dp).
std::int64_t ep_groups_spanning_instances(const RankLayout& layout, std::int64_t ranks_per_instance);

// Findings about the layout on the hardware (not errors): a TP group that spans instances.
// ranks_per_instance <= 0 skips the check.
std::vector<std::string> layout_findings(const RankLayout& layout, std::int64_t ranks_per_instance);

// The tensor engine's format for a training dtype: fp32 and tf32 as they are, bf16 and bf16-sr
// bf16, fp16 and fp8 themselves.
hw::Dtype matmul_dtype(Precision p);
// Activations and the tensors collectives move: 4 bytes under fp32/tf32, else 2.
double activation_bytes(Precision p);

}  // namespace trnsim::workload
