#include <catch2/catch.hpp>

#include <vector>

#include "trnsim/cost/compute_model.hpp"
#include "trnsim/error.hpp"

using namespace trnsim;
using cost::ComputeModel;
using cost::Engine;
using cost::Kernel;

namespace {

// Trainium (NeuronCore-v2) figures from shared/data/hardware.md: 2 cores, 128x128 at 2.8 GHz,
// vector 128 el/cycle at 1.12 GHz, scalar 128 at 1.4 GHz, 820 GiB/s HBM per chip, 190/47.5 TFLOPS.
hw::ChipSpec trn1_chip() {
  hw::ChipSpec c;
  c.name = "Trainium";
  c.physical_cores = 2;
  c.core.pe_rows = 128;
  c.core.pe_cols = 128;
  c.core.tensor_clock_hz = 2.8e9;
  c.core.vector = {128, 1.12e9};
  c.core.scalar = {128, 1.4e9};
  c.peak.bf16 = 190e12;
  c.peak.fp32 = 47.5e12;
  c.peak.fp8 = 190e12;
  c.hbm_bandwidth = 820.0 * 1024 * 1024 * 1024;
  return c;
}

hw::ChipSpec trn2_chip() {
  hw::ChipSpec c = trn1_chip();
  c.name = "Trainium2";
  c.physical_cores = 8;
  c.logical_core_size = 2;
  c.core.tensor_clock_hz = 2.4e9;
  c.core.fp8_contraction_factor = 2;
  c.peak.bf16 = 667e12;
  c.peak.fp8 = 1299e12;
  c.peak.fp32 = 181e12;
  c.hbm_bandwidth = 2.9e12;
  return c;
}

Kernel product(std::int64_t m, std::int64_t n, std::int64_t k) {
  Kernel kr;
  kr.name = "mm";
  kr.op = cost::OpClass::Matmul;
  kr.m = m;
  kr.n = n;
  kr.k = k;
  kr.batch = 1;
  kr.flops = 2.0 * static_cast<double>(m * n * k);
  return kr;
}

double tensor(const ComputeModel& cm, const Kernel& k) {
  return cm.cost(k).engine[static_cast<std::size_t>(Engine::Tensor)];
}

}  // namespace

TEST_CASE("cost: full tiles at 100% efficiency give the published per-core tensor peak") {
  // trn1: 128 * 128 * 2 FLOPs * 2.8 GHz = 91.75 TFLOPS per core (NKI guide: 92).
  const ComputeModel trn1(trn1_chip(), {}, hw::Dtype::Bf16, 1);
  CHECK(trn1.tensor_peak_flops() == Approx(128.0 * 128 * 2 * 2.8e9));
  CHECK(trn1.tensor_peak_flops() == Approx(91.75e12).epsilon(1e-3));
  // A 1024 x 512 x 256 product: 2 k passes x 4 n passes x 1024 rows = 8192 cycles at 2.8 GHz.
  const Kernel k = product(1024, 512, 256);
  CHECK(tensor(trn1, k) == Approx(8192 / 2.8e9));
  CHECK(k.flops / tensor(trn1, k) == Approx(91.75e12).epsilon(1e-3));
  // trn2 at LNC=2: two physical cores of 128 * 128 * 2 * 2.4 GHz = 78.6 TFLOPS each (NKI: 79).
  const ComputeModel trn2(trn2_chip(), {}, hw::Dtype::Bf16, 2);
  CHECK(trn2.tensor_peak_flops() == Approx(2 * 78.64e12).epsilon(1e-3));
}

TEST_CASE("cost: partial tiles waste processing elements") {
  const ComputeModel cm(trn1_chip(), {}, hw::Dtype::Bf16, 1);
  // k = 129 needs 2 contraction passes instead of 1; n = 129 needs 2 column passes.
  CHECK(tensor(cm, product(256, 128, 129)) == Approx(2 * tensor(cm, product(256, 128, 128))));
  CHECK(tensor(cm, product(256, 129, 128)) == Approx(2 * tensor(cm, product(256, 128, 128))));
  // m is streamed row by row: no waste along m.
  CHECK(tensor(cm, product(257, 128, 128)) == Approx(257 / 2.8e9));
}

TEST_CASE("cost: FP8 doubles the contraction on trn2 and fp32 runs at the published fp32 ratio") {
  const ComputeModel bf16(trn2_chip(), {}, hw::Dtype::Bf16, 1);
  const ComputeModel fp8(trn2_chip(), {}, hw::Dtype::Fp8, 1);
  // k = 256: 2 passes in bf16, 1 in fp8 (contraction 256).
  CHECK(tensor(fp8, product(512, 128, 256)) == Approx(tensor(bf16, product(512, 128, 256)) / 2));
  // trn1 fp32: 47.5 / 190 = 1/4 of the bf16 rate.
  const ComputeModel trn1(trn1_chip(), {}, hw::Dtype::Bf16, 1);
  Kernel k = product(512, 128, 128);
  const double low = tensor(trn1, k);
  k.low_precision = false;
  CHECK(tensor(trn1, k) == Approx(4 * low));
}

TEST_CASE("cost: causal products skip the passes above the diagonal") {
  const ComputeModel cm(trn1_chip(), {}, hw::Dtype::Bf16, 1);
  Kernel k = product(512, 512, 128);  // scores: m = n = s = 512, k = head_dim
  k.causal = cost::CausalDim::N;
  // Column passes j = 0..3 stream 512, 384, 256, 128 rows = 1280 cycles (dense: 2048).
  CHECK(tensor(cm, k) == Approx(1280 / 2.8e9));
  Kernel v = product(512, 128, 512);  // O = P V: contraction over the sequence
  v.causal = cost::CausalDim::K;
  CHECK(tensor(cm, v) == Approx(1280 / 2.8e9));
}

TEST_CASE("cost: a kernel takes its busiest engine plus the overhead; HBM is shared by the chip's cores") {
  hw::Calibration cal;
  cal.vector_efficiency = 0.5;
  cal.hbm_efficiency = 0.8;
  cal.task_overhead_s = 2e-6;
  const hw::ChipSpec chip = trn1_chip();
  const ComputeModel cm(chip, cal, hw::Dtype::Bf16, 1);
  Kernel k;
  k.name = "norm";
  k.op = cost::OpClass::Norm;
  k.vector_elements = 1e9;  // 1e9 / (128 * 1.12e9 * 0.5) = 13.95 ms
  k.scalar_elements = 1e8;  // 1e8 / (128 * 1.4e9 * 0.5)
  k.hbm_bytes = 4e9;        // 4e9 / (820 GiB/s / 2 cores * 0.8)
  const auto c = cm.cost(k);
  const double vec = 1e9 / (128 * 1.12e9 * 0.5);
  const double hbm = 4e9 / (chip.hbm_bandwidth / 2 * 0.8);
  CHECK(c.engine[static_cast<std::size_t>(Engine::Vector)] == Approx(vec));
  CHECK(c.engine[static_cast<std::size_t>(Engine::Scalar)] == Approx(1e8 / (128 * 1.4e9 * 0.5)));
  CHECK(c.engine[static_cast<std::size_t>(Engine::Hbm)] == Approx(hbm));
  CHECK(c.seconds == Approx(std::max(vec, hbm) + 2e-6));
}

TEST_CASE("cost: a task's time is the sum of its kernels, split by op class") {
  hw::Calibration cal;
  cal.task_overhead_s = 1e-6;
  const ComputeModel cm(trn1_chip(), cal, hw::Dtype::Bf16, 1);
  Kernel a = product(1280, 128, 128);  // 1280 cycles
  Kernel b;
  b.name = "gelu";
  b.op = cost::OpClass::Activation;
  b.scalar_elements = 128 * 1.4e9 * 1e-3;  // 1 ms on the scalar engine
  const std::vector<Kernel> ks{a, b};
  const auto t = cm.cost(ks);
  CHECK(t.seconds == Approx(1280 / 2.8e9 + 1e-3 + 2e-6));
  CHECK(t.op[static_cast<std::size_t>(cost::OpClass::Matmul)] == Approx(1280 / 2.8e9 + 1e-6));
  CHECK(t.op[static_cast<std::size_t>(cost::OpClass::Activation)] == Approx(1e-3 + 1e-6));
  CHECK(t.overhead_s == Approx(2e-6));
  CHECK(t.flops == Approx(a.flops));
}

TEST_CASE("cost: scalar work runs on the vector engine where a chip has no scalar rate; bad calibration is an error") {
  hw::ChipSpec gpu = trn1_chip();
  gpu.core.scalar = {};
  const ComputeModel cm(gpu, {}, hw::Dtype::Bf16, 1);
  Kernel k;
  k.name = "exp";
  k.scalar_elements = 128 * 1.12e9;  // one second of vector engine
  CHECK(cm.cost(k).engine[static_cast<std::size_t>(Engine::Vector)] == Approx(1.0));
  hw::Calibration bad;
  bad.matmul_efficiency = 1.5;
  CHECK_THROWS_AS(ComputeModel(trn1_chip(), bad, hw::Dtype::Bf16, 1), InputError);
  CHECK_THROWS_AS(ComputeModel(trn1_chip(), {}, hw::Dtype::Bf16, 3), InputError);
}

TEST_CASE("cost: without a tensor clock (GPU presets) matmuls run at the chip's published peak") {
  hw::ChipSpec a100;
  a100.name = "A100";
  a100.family = hw::Family::Gpu;
  a100.core.tensor_clock_hz = 0;
  a100.core.vector = {6912, 1.41e9};
  a100.peak.bf16 = 312e12;
  a100.hbm_bandwidth = 2039e9;
  const ComputeModel cm(a100, {}, hw::Dtype::Bf16, 1);
  const Kernel k = product(4096, 4096, 4096);
  CHECK(tensor(cm, k) == Approx(k.flops / 312e12));
}
