// Spellings of enumerated values. Each list is in the enum's declaration order; the static_asserts
// below catch an enum that grows without its spelling.
#include "trnsim/config/enums.hpp"

namespace trnsim::config {

template <>
const std::vector<std::string_view>& names_of<hw::Family>() {
  static const std::vector<std::string_view> names{"trainium", "gpu"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<hw::Dtype>() {
  static const std::vector<std::string_view> names{"fp32", "tf32", "bf16", "fp16", "fp8"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<hw::IntraTopology>() {
  static const std::vector<std::string_view> names{"single", "torus2d", "nvswitch", "switched"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<workload::MlpKind>() {
  static const std::vector<std::string_view> names{"gelu", "swiglu"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<workload::NormKind>() {
  static const std::vector<std::string_view> names{"layernorm", "rmsnorm"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<workload::ModelArch>() {
  static const std::vector<std::string_view> names{"decoder", "encoder"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<workload::Precision>() {
  static const std::vector<std::string_view> names{"fp32", "tf32", "bf16", "bf16-sr", "fp16", "fp8"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<workload::Optimizer>() {
  static const std::vector<std::string_view> names{"adam", "adamw", "sgd"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<workload::PipelineSchedule>() {
  static const std::vector<std::string_view> names{"gpipe", "1f1b", "1f1b-interleaved"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<workload::Recompute>() {
  static const std::vector<std::string_view> names{"none", "selective", "full"};
  return names;
}
template <>
const std::vector<std::string_view>& names_of<hw::AttentionKernel>() {
  static const std::vector<std::string_view> names{"flash", "materialized"};
  return names;
}

static_assert(static_cast<int>(hw::Dtype::Fp8) == 4);
static_assert(static_cast<int>(hw::IntraTopology::Switched) == 3);
static_assert(static_cast<int>(workload::Precision::Fp8) == 5);
static_assert(static_cast<int>(workload::Optimizer::Sgd) == 2);
static_assert(static_cast<int>(workload::PipelineSchedule::Interleaved) == 2);
static_assert(static_cast<int>(workload::Recompute::Full) == 2);

}  // namespace trnsim::config
