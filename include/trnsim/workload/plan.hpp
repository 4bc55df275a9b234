#pragma once
// The parallelism plan, resolved and validated: plain values the builder and the memory model use,
// the rank layout (which real rank holds which TP/DP/PP coordinate), and precision byte sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/hw/specs.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

// A TrainingSpec and ParallelismSpec with every "not published" field chosen, and what was chosen.
struct ResolvedPlan {
  TrainingSpec training;
  ParallelismSpec parallelism;
  std::vector<std::string> choices;  // "/parallelism/zero = 0 (rule: ...)", one per unset field
};

// The one documented rule for unset fields (to be replaced by a "fastest plan that fits" search):
// sequence_parallel = (tp > 1); zero = 0; virtual_stages = 1; schedule = 1f1b, or 1f1b-interleaved
// when virtual_stages > 1; recompute = selective; micro_batch = 1. Set fields are kept.
ResolvedPlan resolve_defaults(const TrainingSpec& training, const ParallelismSpec& parallelism);

// Resolved plan in plain values.
struct Plan {
  std::int64_t tp = 1, pp = 1, dp = 1;
  std::int64_t micro_batch = 1;      // sequences per micro-batch
  std::int64_t micro_batches = 1;    // micro-batches per pipeline per step
  std::int64_t virtual_stages = 1;   // model chunks per pipeline rank
  bool sequence_parallel = false;
  int zero = 0;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  Recompute recompute = Recompute::Selective;
  std::string rank_order = "tp,dp,pp";
  std::int64_t ranks() const { return tp * pp * dp; }
  std::int64_t layers_per_chunk(std::int64_t layers) const { return layers / (pp * virtual_stages); }
};

// Contract: throws InputError naming the JSON path ("/parallelism/schedule: not resolved",
// "/parallelism/tp: 12 does not divide heads (32)") when a field is unset or the plan does not fit
// the model, the batch or `total_ranks` (0: not checked).
Plan make_plan(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& parallelism,
               std::int64_t total_ranks);

// Rank numbering: the order string lists dimensions fastest first; for "tp,dp,pp",
// rank = tp_i + tp * (dp_i + dp * pp_i).
class RankLayout {
 public:
  struct Coord {
    std::int64_t tp = 0, dp = 0, pp = 0;
  };
  // Contract: throws InputError ("/parallelism/rank_order: ...") unless `order` is a permutation
  // of tp, dp, pp.
  RankLayout(std::int64_t tp, std::int64_t dp, std::int64_t pp, const std::string& order);
  std::int32_t rank(std::int64_t tp_i, std::int64_t dp_i, std::int64_t pp_i) const;
  Coord coord(std::int32_t rank) const;
  std::int32_t size() const { return static_cast<std::int32_t>(tp_ * dp_ * pp_); }
  // Groups in ring order (increasing coordinate along the group's dimension).
  std::vector<std::int32_t> tp_group(std::int64_t dp_i, std::int64_t pp_i) const;
  std::vector<std::int32_t> dp_group(std::int64_t tp_i, std::int64_t pp_i) const;
  std::int64_t tp() const { return tp_; }
  std::int64_t dp() const { return dp_; }
  std::int64_t pp() const { return pp_; }

 private:
  std::int64_t tp_, dp_, pp_;
  std::int64_t stride_tp_ = 1, stride_dp_ = 1, stride_pp_ = 1;
};

// Findings about the layout on the hardware (not errors): a TP group that spans instances.
// ranks_per_instance <= 0 skips the check.
std::vector<std::string> layout_findings(const RankLayout& layout, std::int64_t ranks_per_instance);

// Byte sizes by training precision (DESIGN.md, "Experiment file").
hw::Dtype matmul_dtype(Precision p);
double activation_bytes(Precision p);  // activations and the tensors collectives move
double weight_bytes(Precision p);      // the model weights used in forward/backward
double gradient_bytes(Precision p);    // gradients as accumulated and all-reduced
// Optimizer state per parameter: fp32 master copy (mixed precision) plus the moments
// (Adam/AdamW: 2, SGD: 1 momentum), fp32 except under bf16-sr (bf16, no master).
double optimizer_bytes(Precision p, Optimizer o);

}  // namespace trnsim::workload
