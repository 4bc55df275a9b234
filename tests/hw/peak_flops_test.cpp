#include <catch2/catch.hpp>

#include "trnsim/hw/specs.hpp"

using namespace trnsim::hw;

TEST_CASE("hw: instance peak is chips times chip peak for the asked format") {
  InstanceSpec inst;
  inst.chips = 16;
  inst.chip.peak.bf16 = 190e12;
  inst.chip.peak.fp32 = 47.5e12;
  // trn1-arch.rst: 16 chips x 190 TFLOPS = 3,040 TFLOPS BF16; x 47.5 = 760 TFLOPS FP32.
  CHECK(inst.peak_flops(Dtype::Bf16) == Approx(3040e12));
  CHECK(inst.peak_flops(Dtype::Fp32) == Approx(760e12));
}
