#pragma once
// Time of one compute task on one rank's core(s): each kernel's work split over the engines
// (tensor engine, vector, scalar, HBM through the DMA engines). The engines overlap within a
// kernel, so a kernel takes the time of its busiest engine plus a fixed launch gap; a task's
// kernels run back to back. Matmul time follows the operation's shape, by hardware family:
//
// NeuronCore (Trainium), per product C[m x n] = A[m x k] B[k x n], B stationary in the PE array:
//   passes   ceil(k / kt) x ceil(n / pe_cols) stationary tiles (kt = pe_rows, x2 for FP8 where the
//            contraction doubles); a partial tile costs a full one (the 128x128 tile fill).
//   pass     the m moving rows stream in instructions of at most moving_max (512) columns; an
//            instruction costs its initiation interval, max(columns, min_instruction_cycles) (NKI
//            ISA: MultiplyMoving; the next stationary tile loads in the background at 4x the MM
//            rate, so it never shows above the 64-cycle floor), + O cycles, O =
//            tensor_instruction_overhead_cycles (a what-if; 0 in the presets). Causal products skip
//            the rows above the diagonal pass by pass.
//   time     batch x cycles / (clock x cores x matmul_efficiency x r(dtype)), matmul_efficiency
//            being what the compiler's schedule loses beyond the ISA (fitted per generation); r = peak(dtype) /
//            peak(bf16) from the chip's published peaks (fp32 on trn1: 1/4), 1 for FP8. The clock
//            is derived from the chip's published BF16 peak (hw::CoreSpec::tensor_clock_hz), so
//            full tiles with no overhead give the peak's per-core share (trn1 95, trn2 83.4 TFLOPS).
//   PSUM     the results (m x n x batch, fp32) are copied out of PSUM by the vector engine,
//            overlapped with the array (unless the kernel consumes them in place: flash).
//   SBUF     each operand is read from HBM once while the smaller one fits half of SBUF; beyond,
//            the larger is re-read once per SBUF-sized block of the smaller.
// GPU, per product: output tiles gemm_tile_m x gemm_tile_n (the better orientation), run in waves
//   of `sms` tiles; a tile's main loop over ceil(k / gemm_tile_k) steps runs at the SM's share of
//   the published peak x matmul_efficiency: t = waves x 2 tm tn k' / (peak / sms x eff). Causal
//   products skip the tiles entirely above the diagonal.
// Other engines: vector_elements / (vector rate x cores x vector_efficiency); scalar likewise (on
//   the vector engine when the chip has no scalar rate); hbm_bytes / (min(HBM, DMA) bandwidth x
//   cores / physical_cores x hbm_efficiency): a chip's HBM is shared by its cores.
// Unshaped FLOPs (a trace's count, batch = 0): flops / (the rank's full-tile peak x matmul_efficiency).
// kernel = max(tensor, vector, scalar, hbm) + task_overhead_s (the per-kernel launch gap).
// MFU is quoted against the chip's published peak (report layer).
#include <array>
#include <span>

#include "trnsim/cost/kernel.hpp"
#include "trnsim/hw/specs.hpp"

namespace trnsim::cost {

enum class Engine : std::uint8_t { Tensor, Vector, Scalar, Hbm };
inline constexpr int kEngineCount = 4;
constexpr auto enum_table(Engine) {
  return std::array{EnumName{Engine::Tensor, "tensor"}, EnumName{Engine::Vector, "vector"},
                    EnumName{Engine::Scalar, "scalar"}, EnumName{Engine::Hbm, "hbm"}};
}

struct KernelCost {
  double seconds = 0;                          // max over engines + overhead
  std::array<double, kEngineCount> engine{};  // busy seconds per Engine
};

struct TaskCost {
  double seconds = 0;                          // sum of kernel times
  std::array<double, kEngineCount> engine{};  // busy seconds per Engine, summed over kernels
  std::array<double, kOpClassCount> op{};      // kernel seconds by OpClass (they sum to `seconds`)
  double overhead_s = 0;                       // part of `seconds` that is per-kernel overhead
  double flops = 0;                            // tensor-engine FLOPs executed (Kernel::executed_flops summed)
};

class ComputeModel {
 public:
  // Contract: throws InputError when the chip lacks a rate the model needs or the calibration is
  // outside its range. physical_cores_per_rank: NeuronCores fused into one rank (LNC); GPU: 1.
  ComputeModel(const hw::ChipSpec& chip, const hw::Calibration& calibration, hw::Dtype matmul_dtype,
               int physical_cores_per_rank);

  // hbm_share in (0, 1]: the fraction of the rank's HBM bandwidth left to compute (collective DMA
  // traffic takes the rest; replay::HbmSharing).
  KernelCost cost(const Kernel& kernel, double hbm_share = 1.0) const;
  // Contract: O(kernels x causal passes); no allocation.
  TaskCost cost(std::span<const Kernel> kernels, double hbm_share = 1.0) const;
  // The rank's sustained HBM bandwidth (bytes/s, calibrated efficiency applied).
  double hbm_bytes_per_s() const { return hbm_rate_; }

  // Tensor-engine rate of one rank on full tiles with no instruction overhead and efficiency 1
  // (FLOP/s), for the training dtype (low_precision) or fp32.
  double tensor_peak_flops(bool low_precision = true) const;
  // GPUs run collectives on SMs: the replay executor stretches compute by this factor while a
  // collective is in flight on the rank (Trainium: 1.0, dedicated collective cores).
  double comm_compute_slowdown() const { return calibration_.comm_compute_slowdown; }

 private:
  double tensor_seconds(const Kernel& kernel) const;
  double neuron_cycles(const Kernel& kernel) const;
  double gpu_tensor_seconds(const Kernel& kernel) const;
  double psum_copy_elements(const Kernel& kernel) const;
  double sbuf_reread_bytes(const Kernel& kernel) const;

  hw::ChipSpec chip_;
  hw::Calibration calibration_;
  hw::Dtype dtype_;
  bool systolic_;             // NeuronCore PE-array model (else the GPU tile model)
  double cores_;              // physical cores per rank
  double contraction_tile_;   // pe_rows times the FP8 factor where it applies
  double low_rate_factor_;    // r(dtype) for low_precision kernels
  double fp32_rate_factor_;   // r(fp32)
  double vector_rate_;        // elements/s per rank at calibrated efficiency
  double scalar_rate_;        // 0: scalar work runs on the vector engine
  double hbm_rate_;           // bytes/s per rank at calibrated efficiency
  double sbuf_half_;          // bytes: half of the rank's SBUF, for a resident operand
};

}  // namespace trnsim::cost
