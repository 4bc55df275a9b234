#include "trnsim/cost/compute_model.hpp"

#include <algorithm>
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

// Sum over passes j = 0..passes-1 of the rows still below the diagonal, max(0, m - j*tile).
double causal_rows(double m, double tile, double passes) {
  const double live = std::min(passes, std::ceil(m / tile));
  return live * m - tile * live * (live - 1) / 2;
}

}  // namespace

ComputeModel::ComputeModel(const hw::ChipSpec& chip, const hw::Calibration& calibration,
                           hw::Dtype matmul_dtype, int physical_cores_per_rank)
    : chip_(chip), calibration_(calibration), dtype_(matmul_dtype),
      cores_(physical_cores_per_rank) {
  check_fraction(chip, "matmul_efficiency", calibration.matmul_efficiency);
  check_fraction(chip, "vector_efficiency", calibration.vector_efficiency);
  check_fraction(chip, "hbm_efficiency", calibration.hbm_efficiency);
  if (physical_cores_per_rank < 1 || physical_cores_per_rank > chip.physical_cores) {
    throw InputError(fmt::format("hardware {}: {} physical cores per rank, the chip has {}", chip.name,
                                 physical_cores_per_rank, chip.physical_cores));
  }
  if (chip.core.tensor_clock_hz > 0 && (chip.core.pe_rows < 1 || chip.core.pe_cols < 1)) {
    throw InputError(fmt::format("hardware {}: core/pe_rows and pe_cols must be positive", chip.name));
  }
  if (chip.core.tensor_clock_hz <= 0 && chip.peak.of(matmul_dtype) <= 0) {
    throw InputError(fmt::format("hardware {}: neither a tensor engine clock nor a peak for the training "
                                 "dtype", chip.name));
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
}

double ComputeModel::tensor_peak_flops(bool low_precision) const {
  const double r = low_precision ? low_rate_factor_ : fp32_rate_factor_;
  if (chip_.core.tensor_clock_hz <= 0) {
    const hw::Dtype d = low_precision ? dtype_ : hw::Dtype::Fp32;
    return chip_.peak.of(d) * cores_ / chip_.physical_cores;
  }
  return 2.0 * contraction_tile_ * chip_.core.pe_cols * chip_.core.tensor_clock_hz * cores_ * r;
}

double ComputeModel::tensor_seconds(const Kernel& kr) const {
  if (kr.batch <= 0 || kr.m <= 0 || kr.n <= 0 || kr.k <= 0) return 0;
  const auto m = static_cast<double>(kr.m);
  const auto n = static_cast<double>(kr.n);
  const auto k = static_cast<double>(kr.k);
  const auto batch = static_cast<double>(kr.batch);
  const double eff = calibration_.matmul_efficiency;
  if (chip_.core.tensor_clock_hz <= 0) {
    // Roofline on the chip's share of the published peak; causal work is the lower triangle.
    double flops = 2 * m * n * k * batch;
    if (kr.causal == CausalDim::N) flops *= causal_rows(m, 1, n) / (m * n);
    if (kr.causal == CausalDim::K) flops *= causal_rows(m, 1, k) / (m * k);
    return flops / (tensor_peak_flops(kr.low_precision) * eff);
  }
  const double col_tile = chip_.core.pe_cols;
  const double k_passes = std::ceil(k / contraction_tile_);
  const double n_passes = std::ceil(n / col_tile);
  double rows = m * k_passes * n_passes;  // cycles: one row per cycle per (k, n) pass
  if (kr.causal == CausalDim::N) rows = k_passes * causal_rows(m, col_tile, n_passes);
  if (kr.causal == CausalDim::K) rows = n_passes * causal_rows(m, contraction_tile_, k_passes);
  const double r = kr.low_precision ? low_rate_factor_ : fp32_rate_factor_;
  return batch * rows / (chip_.core.tensor_clock_hz * cores_ * eff * r);
}

KernelCost ComputeModel::cost(const Kernel& kr, double hbm_share) const {
  KernelCost c;
  c.engine[idx(Engine::Tensor)] = tensor_seconds(kr);
  double vector_work = kr.vector_elements;
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
  c.engine[idx(Engine::Hbm)] = kr.hbm_bytes / (hbm_rate_ * hbm_share);
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
    t.flops += kr.flops;
  }
  return t;
}

}  // namespace trnsim::cost
