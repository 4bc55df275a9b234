// Spellings of the cost model's and the plan's enums in the reports (declared in step_report.hpp).
#include "trnsim/report/analysis/step_report.hpp"

#include "trnsim/enum_names.hpp"

namespace trnsim::report {

std::string_view engine_name(cost::Engine e) {
  switch (e) {
    case cost::Engine::Tensor: return "tensor";
    case cost::Engine::Vector: return "vector";
    case cost::Engine::Scalar: return "scalar";
    case cost::Engine::Hbm: return "hbm";
  }
  return "?";
}

std::string_view op_class_name(cost::OpClass c) {
  switch (c) {
    case cost::OpClass::Matmul: return "matmul";
    case cost::OpClass::Attention: return "attention";
    case cost::OpClass::Norm: return "norm";
    case cost::OpClass::Activation: return "activation";
    case cost::OpClass::Elementwise: return "elementwise";
    case cost::OpClass::Embedding: return "embedding";
    case cost::OpClass::Loss: return "loss";
    case cost::OpClass::Optimizer: return "optimizer";
  }
  return "?";
}

std::string_view schedule_name(workload::PipelineSchedule s) { return trnsim::to_string(s); }
std::string_view recompute_name(workload::Recompute r) { return trnsim::to_string(r); }

}  // namespace trnsim::report
