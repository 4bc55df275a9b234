#pragma once
// The training software: what a framework decides about a step, as opposed to what the hardware
// can do (docs/architecture.md, "Facts, calibration and data"). Filled by the config layer from
// configs/software/*.json; every fact there carries its source. The workload builder, the memory
// model and the plan rule honour these fields; the hardware presets hold physics only.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trnsim/enum_names.hpp"
#include "trnsim/hw/specs.hpp"
#include "trnsim/net/collective_policy.hpp"
#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

// SoftwareSpec::fsdp_prefetch_units "memory": as many layers ahead as memory allows.
inline constexpr std::int64_t kPrefetchAsMemoryAllows = -1;

// Plan fields a stack fills in when an experiment leaves them null ("not published").
// Configuration keys: kPlanDefaultsFields in src/config/software_fields.cpp.
struct PlanDefaults {
  std::optional<std::int64_t> micro_batch;
  std::optional<bool> sequence_parallel;
  std::optional<int> zero;
  std::optional<PipelineSchedule> schedule;
  std::optional<std::int64_t> virtual_stages;
  std::optional<Recompute> recompute;
  std::optional<hw::AttentionKernel> attention;
};

// A published recipe of the stack for one model (a launch script): its own defaults, which take
// precedence over the stack's general ones for experiments whose model has this name.
struct Recipe {
  std::string model;      // model preset or inline model name ("gpt3-23b", "llama2-7b")
  PlanDefaults defaults;
  std::string source;
};

// Storage format of one part of the training state.
enum class Storage : std::uint8_t { Fp32, Bf16, Fp16, Fp8, None };
constexpr auto enum_table(Storage) {
  return std::array{EnumName{Storage::Fp32, "fp32"}, EnumName{Storage::Bf16, "bf16"},
                    EnumName{Storage::Fp16, "fp16"}, EnumName{Storage::Fp8, "fp8"},
                    EnumName{Storage::None, "none"}};
}
// Bytes per element; None (no such copy) 0.
constexpr double bytes(Storage s) {
  switch (s) {
    case Storage::Fp32: return 4;
    case Storage::Bf16:
    case Storage::Fp16: return 2;
    case Storage::Fp8: return 1;
    case Storage::None: return 0;
  }
  return 0;
}

// Neuron compiler --auto-cast: which fp32 operations run at the cast type's rate.
enum class AutoCast : std::uint8_t { None, Matmult, All };
constexpr auto enum_table(AutoCast) {
  return std::array{EnumName{AutoCast::None, "none"}, EnumName{AutoCast::Matmult, "matmult"},
                    EnumName{AutoCast::All, "all"}};
}

// How the stack stores the training state. master_weights None = no separate master copy (the
// weights themselves are updated, e.g. bf16 with stochastic rounding).
// Configuration keys: kPrecisionFields in src/config/software_fields.cpp.
struct PrecisionRecipe {
  Storage weights = Storage::Bf16;            // the weights forward and backward read
  Storage gradients = Storage::Bf16;          // gradients as produced and as reduced over DP
  Storage grad_accumulation = Storage::Fp32;  // the buffer gradients accumulate in across micro-batches
  Storage master_weights = Storage::Fp32;     // fp32 master copy held by the optimizer
  Storage optimizer_states = Storage::Fp32;   // each optimizer moment
  bool stochastic_rounding = false;
  AutoCast fp32_autocast = AutoCast::None;
  hw::Dtype autocast_type = hw::Dtype::Bf16;
};

// Which kernels the stack runs: what is fused and how attention is computed.
// Configuration keys: kKernelsFields in src/config/software_fields.cpp.
struct Kernels {
  hw::AttentionKernel attention = hw::AttentionKernel::Flash;
  bool fused_softmax = true;           // scale + mask + softmax in one kernel (materialized attention)
  bool fused_bias_activation = true;   // bias + GeLU in one kernel
  bool fused_dropout_add = true;       // bias + dropout + residual add in one kernel
  // Gradient accumulation across micro-batches inside the weight-gradient GEMM (beta = 1) rather
  // than a separate read-modify-write of the accumulation buffer.
  bool fused_grad_accumulation = false;
};

// When data-parallel gradient reduction runs.
enum class DpReduction : std::uint8_t {
  Overlapped,     // bucketed, during the backward pass of the last micro-batch (PyTorch DDP)
  AfterBackward,  // once, after the backward pass of the last micro-batch (Megatron-LM 2021 local DDP)
};
constexpr auto enum_table(DpReduction) {
  return std::array{EnumName{DpReduction::Overlapped, "overlapped"},
                    EnumName{DpReduction::AfterBackward, "after-backward"}};
}

// Configuration keys: kOverlapFields in src/config/software_fields.cpp.
struct Overlap {
  DpReduction dp_reduction = DpReduction::Overlapped;
  // The backward pass's reduction of a layer's input gradient (all-reduce, or reduce-scatter
  // under SP) runs alongside that layer's weight-gradient GEMM, which does not need it (Megatron-LM's
  // asynchronous tensor-parallel all-reduce); off: every TP collective is on the critical path.
  bool tp_comm = false;
};

// The generic recipe of a training dtype (README.md, "Configuration", training.dtype): fp32/tf32 fp32
// everywhere; bf16/fp16/fp8 low-precision weights and gradients, fp32 master copy and moments;
// bf16-sr bf16 everywhere with stochastic rounding, no master copy. Gradients accumulate in fp32
// except under bf16-sr. Defined in workload/software.cpp.
PrecisionRecipe default_recipe(Precision p);

// How attention exchanges K/V over the context-parallel group (parallelism.cp > 1).
enum class CpAttention : std::uint8_t {
  Ring,       // ring attention: cp - 1 block transfers to the ring neighbour, each alongside a block
  AllGather,  // K/V all-gathered over the CP group before attention, dK/dV reduce-scattered after
};
constexpr auto enum_table(CpAttention) {
  return std::array{EnumName{CpAttention::Ring, "ring"}, EnumName{CpAttention::AllGather, "allgather"}};
}

struct SoftwareSpec;
// Mixture of experts: the routed load of the simulated rank over the mean
// (workload/moe_steps.hpp): training.moe_imbalance, capped at moe_capacity_factor when the
// software drops the tokens beyond capacity, the capacity factor itself when it pads every expert
// to capacity; the imbalance alone without a capacity factor (dropless).
double expert_load(const TrainingSpec& training, const SoftwareSpec& software);

// The tensor engine's format: the training dtype's (plan.hpp, matmul_dtype), except that fp32 and
// tf32 matmuls run at the cast type's rate when the Neuron compiler's --auto-cast covers them
// (matmult or all).
hw::Dtype matmul_dtype(Precision p, const PrecisionRecipe& recipe);

struct PrecisionEntry {
  Precision dtype = Precision::Bf16;  // training.dtype this recipe applies to
  PrecisionRecipe recipe;
};

// Configuration keys: kSoftwareFields in src/config/software_fields.cpp.
struct SoftwareSpec {
  std::string name;    // preset name
  std::string source;
  PlanDefaults defaults;
  std::vector<Recipe> recipes;
  // The stack's recipe per training dtype; a dtype not listed runs default_recipe(dtype).
  std::vector<PrecisionEntry> precision;
  Kernels kernels;
  Overlap overlap;
  // Whether the stack replicates KV heads when tp exceeds them (NeuronX Distributed's
  // kv_replicator); without it such a plan is an error.
  bool kv_replication = true;
  // Mixture of experts under a capacity factor (TrainingSpec::moe_capacity_factor): true, every
  // expert's buffer is padded up to capacity (Megatron-Core --moe-pad-expert-input-to-capacity);
  // false, the tokens beyond it are dropped and the rest run unpadded.
  bool moe_pad_to_capacity = false;
  // Context parallelism's K/V exchange (workload/context_steps.hpp).
  CpAttention cp_attention = CpAttention::Ring;
  // FSDP (zero 3): how many layers ahead of the computing one a pass's all-gathers run
  // (build_step.cpp, FsdpUnit): a pass issues the gathers of its first k + 1 layers when it
  // starts and layer j + k's when layer j starts; k + 1 gathered layers are held at once
  // (memory.hpp). FSDP2 in eager mode: 1, the next layer's gather issued when a layer starts.
  // SimpleFSDP under the compiler: the compiler's schedule, taken as "as many layers ahead as
  // memory allows" (assumption): kPrefetchAsMemoryAllows, JSON "memory", which the plan rule
  // turns into the largest k that fits the rank's HBM (ParallelismSpec::fsdp_prefetch).
  std::int64_t fsdp_prefetch_units = 1;
  net::CollectivePolicy collectives;
  // The stack's own recipe for `p`, or nullptr (a dtype it states none for).
  const PrecisionRecipe* stated_precision(Precision p) const {
    for (const PrecisionEntry& e : precision) {
      if (e.dtype == p) return &e.recipe;
    }
    return nullptr;
  }
  PrecisionRecipe precision_for(Precision p) const {
    const PrecisionRecipe* stated = stated_precision(p);
    return stated != nullptr ? *stated : default_recipe(p);
  }
  // The recipe for `model_name`, or nullptr.
  const Recipe* recipe_for(const std::string& model_name) const {
    for (const Recipe& r : recipes) {
      if (r.model == model_name) return &r;
    }
    return nullptr;
  }
};

}  // namespace trnsim::workload
