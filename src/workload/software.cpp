#include "trnsim/workload/software.hpp"

namespace trnsim::workload {

PrecisionRecipe default_recipe(Precision p) {
  PrecisionRecipe r;
  switch (p) {
    case Precision::Fp32:
    case Precision::Tf32:
      r.weights = r.gradients = r.grad_accumulation = r.optimizer_states = 4;
      r.master_weights = 0;  // the weights are already fp32
      break;
    case Precision::Bf16Sr:
      r.weights = r.gradients = r.grad_accumulation = r.optimizer_states = 2;
      r.master_weights = 0;
      r.stochastic_rounding = true;
      break;
    case Precision::Bf16:
    case Precision::Fp16:
    case Precision::Fp8:
      r.weights = r.gradients = 2;
      r.grad_accumulation = r.master_weights = r.optimizer_states = 4;
      break;
  }
  return r;
}

}  // namespace trnsim::workload
