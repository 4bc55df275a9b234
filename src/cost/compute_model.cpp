#include "trnsim/cost/compute_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "trnsim/error.hpp"

namespace trnsim::cost {
namespace {

void check_fraction(const hw::ChipSpec& chip, const char* name, double v) {
  if (!(v > 0 && v <= 1)) {
    throw InputError(fmt::format("hardware {}: calibration/{}: expected a fraction in (0, 1], found {}",
                                 chip.name, name, v));
  }
}

// Relative matmul rate of a format against BF16, from the chip's published peaks (1 when unknown).
double rate_factor(const hw::PeakFlops& peak, hw::Dtype d) {
  if (d == hw::Dtype::Fp8) return 1.0;  // FP8's speed-up is the wider contraction, not the clock
  const double bf16 = peak.bf16;
  const double other = peak.of(d);
  return (bf16 > 0 && other > 0) ? other / bf16 : 1.0;
}

constexpr std::size_t idx(Engine e) { return static_cast<std::size_t>(e); }

// Cycles of one stationary tile's pass over `rows` moving rows: instructions of at most `chunk`
// columns, each max(columns, min_cycles) plus `overhead`.
// A product's m, n, k as doubles, for the tile arithmetic.
std::array<double, 3> dims(const Kernel& kr) {
  return {static_cast<double>(kr.m), static_cast<double>(kr.n), static_cast<double>(kr.k)};
}

double pass_cycles(double rows, double chunk, double min_cycles, double overhead) {
  if (rows <= 0) return 0;
  const double full = std::floor(rows / chunk);
  const double rest = rows - full * chunk;
  double cycles = full * (std::max(chunk, min_cycles) + overhead);
  if (rest > 0) cycles += std::max(rest, min_cycles) + overhead;
  return cycles;
}

// Sum over passes j = 0..passes-1 of the rows still at or below the diagonal, max(0, m - j*tile),
// each pass costed by pass_cycles.
double causal_pass_cycles(double m, double tile, double passes, double chunk, double min_cycles,
                          double overhead) {
  double cycles = 0;
  const double live = std::min(passes, std::ceil(m / tile));
  for (double j = 0; j < live; ++j) cycles += pass_cycles(m - j * tile, chunk, min_cycles, overhead);
  return cycles;
}

}  // namespace

ComputeModel::ComputeModel(const hw::ChipSpec& chip, const hw::Calibration& calibration,
                           hw::Dtype matmul_dtype, int physical_cores_per_rank)
    : chip_(chip), calibration_(calibration), dtype_(matmul_dtype),
      systolic_(chip.family == hw::Family::Trainium), cores_(physical_cores_per_rank) {
  check_fraction(chip, "matmul_efficiency", calibration.matmul_efficiency);
  check_fraction(chip, "vector_efficiency", calibration.vector_efficiency);
  check_fraction(chip, "hbm_efficiency", calibration.hbm_efficiency);
  if (!(calibration.tensor_instruction_overhead_cycles >= 0)) {
    throw InputError(fmt::format("hardware {}: calibration/tensor_instruction_overhead_cycles: expected >= 0, "
                                 "found {}", chip.name, calibration.tensor_instruction_overhead_cycles));
  }
  if (physical_cores_per_rank < 1 || physical_cores_per_rank > chip.physical_cores) {
    throw InputError(fmt::format("hardware {}: {} physical cores per rank, the chip has {}", chip.name,
                                 physical_cores_per_rank, chip.physical_cores));
  }
  if (systolic_) {
    if (chip.core.tensor_clock_hz <= 0 || chip.core.pe_rows < 1 || chip.core.pe_cols < 1 ||
        chip.core.moving_max < 1 || chip.core.min_instruction_cycles < 0) {
      throw InputError(fmt::format("hardware {}: the NeuronCore model needs a tensor clock, pe_rows, pe_cols "
                                   "and moving_max > 0", chip.name));
    }
  } else {
    if (chip.peak.of(matmul_dtype) <= 0) {
      throw InputError(fmt::format("hardware {}: no published peak for the training dtype", chip.name));
    }
    if (chip.core.sms < 1 || chip.core.gemm_tile_m < 1 || chip.core.gemm_tile_n < 1 || chip.core.gemm_tile_k < 1) {
      throw InputError(fmt::format("hardware {}: the GPU model needs core/sms and the GEMM tile "
                                   "(gemm_tile_m, gemm_tile_n, gemm_tile_k)", chip.name));
    }
  }
  if (chip.hbm_bandwidth <= 0) {
    throw InputError(fmt::format("hardware {}: hbm_bandwidth must be positive", chip.name));
  }
  const int fp8 = matmul_dtype == hw::Dtype::Fp8 ? std::max(1, chip.core.fp8_contraction_factor) : 1;
  contraction_tile_ = static_cast<double>(chip.core.pe_rows) * fp8;
  low_rate_factor_ = rate_factor(chip.peak, matmul_dtype);
  fp32_rate_factor_ = rate_factor(chip.peak, hw::Dtype::Fp32);
  vector_rate_ = chip.core.vector.elements_per_second() * cores_ * calibration.vector_efficiency;
  scalar_rate_ = chip.core.scalar.elements_per_second() * cores_ * calibration.vector_efficiency;
  double bandwidth = chip.hbm_bandwidth;
  if (chip.dma_bandwidth > 0) bandwidth = std::min(bandwidth, chip.dma_bandwidth);
  hbm_rate_ = bandwidth * cores_ / chip.physical_cores * calibration.hbm_efficiency;
  sbuf_half_ = chip.core.sbuf_bytes * cores_ / 2;
}

double ComputeModel::tensor_peak_flops(bool low_precision) const {
  if (!systolic_) {
    const hw::Dtype d = low_precision ? dtype_ : hw::Dtype::Fp32;
    return chip_.peak.of(d) * cores_ / chip_.physical_cores;
  }
  const double r = low_precision ? low_rate_factor_ : fp32_rate_factor_;
  return 2.0 * contraction_tile_ * chip_.core.pe_cols * chip_.core.tensor_clock_hz * cores_ * r;
}

double ComputeModel::neuron_cycles(const Kernel& kr) const {
  const auto [m, n, k] = dims(kr);
  const double col_tile = chip_.core.pe_cols;
  const double chunk = chip_.core.moving_max;
  const double min_cycles = chip_.core.min_instruction_cycles;
  const double overhead = calibration_.tensor_instruction_overhead_cycles;
  const double k_passes = std::ceil(k / contraction_tile_);
  const double n_passes = std::ceil(n / col_tile);
  switch (kr.causal) {
    case CausalDim::N:
      return k_passes * causal_pass_cycles(m, col_tile, n_passes, chunk, min_cycles, overhead);
    case CausalDim::K:
      return n_passes * causal_pass_cycles(m, contraction_tile_, k_passes, chunk, min_cycles, overhead);
    case CausalDim::None: break;
  }
  return k_passes * n_passes * pass_cycles(m, chunk, min_cycles, overhead);
}

double ComputeModel::gpu_tensor_seconds(const Kernel& kr) const {
  // Named copies, not a structured binding: the lambdas below capture them (clang 14 cannot
  // capture bindings).
  const std::array<double, 3> mnk = dims(kr);
  const double m = mnk[0], n = mnk[1], k = mnk[2];
  const double sms = chip_.core.sms;
  const double tk = chip_.core.gemm_tile_k;
  const double k_padded = std::ceil(k / tk) * tk;
  const double per_sm = tensor_peak_flops(kr.low_precision) / sms * calibration_.matmul_efficiency;
  // Tiles of one product in the orientation (tm along m, tn along n); causal products skip the
  // tiles entirely above the diagonal (row tile i meets the first (i+1) tm sequence positions).
  auto tiles = [&](double tm, double tn) {
    const double rows = std::ceil(m / tm);
    const double cols = std::ceil(n / tn);
    if (kr.causal != CausalDim::N) return rows * cols;
    double live = 0;
    for (double i = 0; i < rows; ++i) live += std::min(cols, std::ceil((i + 1) * tm / tn));
    return live;
  };
  auto seconds = [&](double tm, double tn) {
    double work = k_padded;
    // P V with a causal mask: each row tile's main loop stops at the diagonal, on average half-way.
    if (kr.causal == CausalDim::K) work = std::min(k_padded, std::ceil((m + tm) / 2 / tk) * tk);
    const double waves = std::ceil(tiles(tm, tn) * static_cast<double>(kr.batch) / sms);
    return waves * 2 * tm * tn * work / per_sm;
  };
  const double a = chip_.core.gemm_tile_m;
  const double b = chip_.core.gemm_tile_n;
  return std::min(seconds(a, b), seconds(b, a));
}

double ComputeModel::tensor_seconds(const Kernel& kr) const {
  // FLOPs without a shape (a trace's count, e.g. Chakra's num_ops): full tiles at the calibrated
  // efficiency, the best the shape could give. build_step always gives matmuls their shape.
  if (kr.batch <= 0 && kr.flops > 0) return kr.flops / (tensor_peak_flops(kr.low_precision) * calibration_.matmul_efficiency);
  if (kr.batch <= 0 || kr.m <= 0 || kr.n <= 0 || kr.k <= 0) return 0;
  if (!systolic_) return kr.transpose ? 0 : gpu_tensor_seconds(kr);
  const double r = kr.low_precision ? low_rate_factor_ : fp32_rate_factor_;
  return static_cast<double>(kr.batch) * neuron_cycles(kr) /
         (chip_.core.tensor_clock_hz * cores_ * calibration_.matmul_efficiency * r);
}

double ComputeModel::psum_copy_elements(const Kernel& kr) const {
  if (!systolic_ || kr.fused_epilogue || kr.batch <= 0 || kr.m <= 0 || kr.n <= 0 || kr.k <= 0) return 0;
  return static_cast<double>(kr.m) * static_cast<double>(kr.n) * static_cast<double>(kr.batch);
}

double ComputeModel::sbuf_reread_bytes(const Kernel& kr) const {
  if (!systolic_ || kr.fused_epilogue || kr.batch <= 0 || !(sbuf_half_ > 0)) return 0;
  const auto m = static_cast<double>(kr.m);
  const auto n = static_cast<double>(kr.n);
  const auto k = static_cast<double>(kr.k);
  const double a = m * k * kr.element_bytes;
  const double b = k * n * kr.element_bytes;
  const double small = std::min(a, b);
  const double large = std::max(a, b);
  const double blocks = std::ceil(small / sbuf_half_);
  return blocks > 1 ? (blocks - 1) * large * static_cast<double>(kr.batch) : 0;
}

KernelCost ComputeModel::cost(const Kernel& kr, double hbm_share) const {
  KernelCost c;
  c.engine[idx(Engine::Tensor)] = tensor_seconds(kr);
  double vector_work = kr.vector_elements + psum_copy_elements(kr);
  if (kr.scalar_elements > 0) {
    if (scalar_rate_ > 0) {
      c.engine[idx(Engine::Scalar)] = kr.scalar_elements / scalar_rate_;
    } else {
      vector_work += kr.scalar_elements;
    }
  }
  if (vector_work > 0) {
    if (vector_rate_ <= 0) {
      throw InputError(fmt::format("hardware {}: core/vector engine rate is not set but kernel '{}' needs it",
                                   chip_.name, kr.name));
    }
    c.engine[idx(Engine::Vector)] = vector_work / vector_rate_;
  }
  c.engine[idx(Engine::Hbm)] = (kr.hbm_bytes + sbuf_reread_bytes(kr)) / (hbm_rate_ * hbm_share);
  c.seconds = *std::max_element(c.engine.begin(), c.engine.end()) + calibration_.task_overhead_s;
  return c;
}

TaskCost ComputeModel::cost(std::span<const Kernel> kernels, double hbm_share) const {
  if (!(hbm_share > 0 && hbm_share <= 1)) {
    throw InternalError(fmt::format("cost: HBM share {} outside (0, 1]", hbm_share));
  }
  TaskCost t;
  for (const Kernel& kr : kernels) {
    const KernelCost c = cost(kr, hbm_share);
    t.seconds += c.seconds;
    for (std::size_t e = 0; e < t.engine.size(); ++e) t.engine[e] += c.engine[e];
    t.op[static_cast<std::size_t>(kr.op)] += c.seconds;
    t.overhead_s += calibration_.task_overhead_s;
    t.flops += kr.executed_flops();
  }
  return t;
}

}  // namespace trnsim::cost
