#include "trnsim/hw/specs.hpp"

namespace trnsim::hw {

double PeakFlops::of(Dtype d) const {
  switch (d) {
    case Dtype::Fp32: return fp32;
    case Dtype::Tf32: return tf32;
    case Dtype::Bf16: return bf16;
    case Dtype::Fp16: return fp16;
    case Dtype::Fp8: return fp8;
  }
  return 0;
}

}  // namespace trnsim::hw
