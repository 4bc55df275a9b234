#include "trnsim/workload/software.hpp"

#include <algorithm>

#include "trnsim/workload/plan.hpp"

namespace trnsim::workload {

PrecisionRecipe default_recipe(Precision p) {
  PrecisionRecipe r;
  switch (p) {
    case Precision::Fp32:
    case Precision::Tf32:
      r.weights = r.gradients = r.grad_accumulation = r.optimizer_states = Storage::Fp32;
      r.master_weights = Storage::None;  // the weights are already fp32
      break;
    case Precision::Bf16Sr:
      r.weights = r.gradients = r.grad_accumulation = r.optimizer_states = Storage::Bf16;
      r.master_weights = Storage::None;
      r.stochastic_rounding = true;
      break;
    case Precision::Fp16:
      r.weights = r.gradients = Storage::Fp16;
      break;
    case Precision::Bf16:
    case Precision::Fp8:
      break;  // bf16 weights and gradients, fp32 accumulation, master copy and moments
  }
  return r;
}

hw::Dtype matmul_dtype(Precision p, const PrecisionRecipe& recipe) {
  const bool fp32 = p == Precision::Fp32 || p == Precision::Tf32;
  if (fp32 && recipe.fp32_autocast != AutoCast::None) return recipe.autocast_type;
  return matmul_dtype(p);
}

double expert_load(const TrainingSpec& training, const SoftwareSpec& software) {
  const double capacity = training.moe_capacity_factor;
  if (capacity <= 0) return training.moe_imbalance;
  return software.moe_pad_to_capacity ? capacity : std::min(training.moe_imbalance, capacity);
}

}  // namespace trnsim::workload
