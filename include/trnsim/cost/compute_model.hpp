#pragma once
// Time of one compute task on one rank's core(s): each kernel's work split over the NeuronCore's
// engines (tensor engine with 128x128 tiling, vector, scalar, HBM through the DMA engines). The
// engines overlap within a kernel, so a kernel takes the time of its busiest engine plus a fixed
// overhead; a task's kernels run back to back. GPUs: tensor cores, CUDA cores and HBM alike.
//
// Formulas (units: seconds; "cores" = physical cores per rank, LNC=2 fuses two):
//   tensor:  one product C[m x n] = A[m x k] B[k x n] occupies the PE array for
//            ceil(k / (pe_rows * f)) * ceil(n / pe_cols) passes of m rows, one row per cycle
//            (f = fp8_contraction_factor for FP8, else 1). A partial tile costs a full pass: that
//            is the waste of k or n not multiple of 128. Causal products skip the passes above the
//            diagonal: pass j along the sequence dimension streams only m - j*tile rows.
//            t = batch * cycles / (tensor_clock * cores * matmul_efficiency * r(dtype)),
//            r = peak(dtype) / peak(bf16) from the chip's published peaks (fp32 on trn1: 1/4),
//            r = 1 for FP8 (its speed-up is the contraction factor). Full tiles at 100% give
//            2 * pe_rows * pe_cols * clock per core; the presets' clock is derived from the chip's
//            published BF16 peak (hw::CoreSpec::tensor_clock_hz), so this is the peak's per-core
//            share: trn1 95 TFLOPS, trn2 83.4 TFLOPS BF16.
//            Without a tensor clock in the preset (GPUs): dense flops / (chip peak share).
//   vector:  vector_elements / (vector elements/s * cores * vector_efficiency)
//   scalar:  scalar_elements / (scalar elements/s * cores * vector_efficiency); a chip without a
//            scalar engine rate runs them on the vector engine.
//   hbm:     hbm_bytes / (min(hbm_bandwidth, dma_bandwidth) * cores / physical_cores
//            * hbm_efficiency): a chip's HBM is shared by all its cores.
//   kernel:  max(tensor, vector, scalar, hbm) + task_overhead_s
// Time uses engine rates; MFU is quoted against the chip's published peak (report layer), which
// the full-tile BF16 rate equals for the presets (the clock is derived from it).
#include <array>
#include <span>

#include "trnsim/cost/kernel.hpp"
#include "trnsim/hw/specs.hpp"

namespace trnsim::cost {

enum class Engine : std::uint8_t { Tensor, Vector, Scalar, Hbm };
inline constexpr int kEngineCount = 4;

struct KernelCost {
  double seconds = 0;                          // max over engines + overhead
  std::array<double, kEngineCount> engine{};  // busy seconds per Engine
};

struct TaskCost {
  double seconds = 0;                          // sum of kernel times
  std::array<double, kEngineCount> engine{};  // busy seconds per Engine, summed over kernels
  std::array<double, kOpClassCount> op{};      // kernel seconds by OpClass (they sum to `seconds`)
  double overhead_s = 0;                       // part of `seconds` that is per-kernel overhead
  double flops = 0;                            // tensor-engine FLOPs (Kernel::flops summed)
};

class ComputeModel {
 public:
  // Contract: throws InputError when the chip lacks a rate the model needs or the calibration is
  // outside (0, 1]. physical_cores_per_rank: NeuronCores fused into one rank (LNC); GPU: 1.
  ComputeModel(const hw::ChipSpec& chip, const hw::Calibration& calibration, hw::Dtype matmul_dtype,
               int physical_cores_per_rank);

  // hbm_share in (0, 1]: the fraction of the rank's HBM bandwidth left to compute (collective DMA
  // traffic takes the rest; replay::HbmSharing).
  KernelCost cost(const Kernel& kernel, double hbm_share = 1.0) const;
  // Contract: O(kernels); no allocation.
  TaskCost cost(std::span<const Kernel> kernels, double hbm_share = 1.0) const;
  // The rank's sustained HBM bandwidth (bytes/s, calibrated efficiency applied).
  double hbm_bytes_per_s() const { return hbm_rate_; }

  // Tensor-engine rate of one rank on full tiles at 100% efficiency (FLOP/s), for the dtype given.
  double tensor_peak_flops(bool low_precision = true) const;
  // GPUs run collectives on SMs: the replay executor stretches compute by this factor while a
  // collective is in flight on the rank (Trainium: 1.0, dedicated collective cores).
  double comm_compute_slowdown() const { return calibration_.comm_compute_slowdown; }

 private:
  double tensor_seconds(const Kernel& kernel) const;

  hw::ChipSpec chip_;
  hw::Calibration calibration_;
  hw::Dtype dtype_;
  double cores_;              // physical cores per rank
  double contraction_tile_;   // pe_rows times the FP8 factor where it applies
  double low_rate_factor_;    // r(dtype) for low_precision kernels
  double fp32_rate_factor_;   // r(fp32)
  double vector_rate_;        // elements/s per rank at calibrated efficiency
  double scalar_rate_;        // 0: scalar work runs on the vector engine
  double hbm_rate_;           // bytes/s per rank at calibrated efficiency
};

}  // namespace trnsim::cost
