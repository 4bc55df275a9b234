#pragma once
// One kernel's work, hardware-independent: what the workload layer asks of a core. The cost layer
// turns it into time per engine (cost::ComputeModel).
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "trnsim/enum_names.hpp"

namespace trnsim::cost {

// What a kernel mostly does; reports group busy time by it.
enum class OpClass : std::uint8_t {
  Matmul,       // dense projections (QKV, out, MLP, LM head)
  Attention,    // attention core: QK^T, softmax, AV (flash-style, fused)
  Norm,         // LayerNorm / RMSNorm
  Activation,   // GELU / SwiGLU gate
  Elementwise,  // residual adds, dropout, rotary, casts
  Embedding,    // token/position lookup and its gradient
  Loss,         // softmax cross-entropy over the vocabulary
  Optimizer,    // Adam/AdamW update
};
inline constexpr int kOpClassCount = 8;
constexpr auto enum_table(OpClass) {
  return std::array{EnumName{OpClass::Matmul, "matmul"},         EnumName{OpClass::Attention, "attention"},
                    EnumName{OpClass::Norm, "norm"},             EnumName{OpClass::Activation, "activation"},
                    EnumName{OpClass::Elementwise, "elementwise"}, EnumName{OpClass::Embedding, "embedding"},
                    EnumName{OpClass::Loss, "loss"},             EnumName{OpClass::Optimizer, "optimizer"}};
}

// Causal masking of a product whose rows (m) are sequence positions: row i only meets the first
// i+1 positions of the other sequence dimension, so tiles above the diagonal are skipped.
enum class CausalDim : std::uint8_t {
  None,
  N,  // the sequence dimension is n (scores S = Q K^T: m = n = s)
  K,  // the sequence dimension is the contraction k (O = P V: m = k = s)
};

// One kernel's work, hardware-independent; cost::ComputeModel turns it into time per engine.
struct Kernel {
  std::string name;            // "qkv", "attn_scores", "fc1_wgrad", ... (reports, debugging)
  OpClass op = OpClass::Elementwise;
  // Tensor-engine part: `batch` independent products C[m x n] = A[m x k] * B[k x n].
  std::int64_t m = 0, n = 0, k = 0, batch = 0;
  CausalDim causal = CausalDim::None;
  double vector_elements = 0;  // element operations on the vector engine (GPU: CUDA cores)
  double scalar_elements = 0;  // transcendental element operations on the scalar engine (exp, gelu)
  double hbm_bytes = 0;        // bytes read + written in HBM
  // Tensor-engine FLOPs as MFU counts them: 2mnk per product, dense (a causal product still
  // counts its full m x n: the Megatron-LM convention 24Bsh^2(1 + s/6h) per layer). Elementwise
  // work is not counted here; it is in vector_elements / scalar_elements.
  double flops = 0;
  bool low_precision = true;   // runs at the training dtype's matmul rate (false: fp32)
  // Bytes per operand element in HBM (SBUF re-reads, cost layer).
  double element_bytes = 2;
  // The product's results are consumed where they accumulate (flash attention's softmax reads
  // PSUM itself): no separate copy out of PSUM.
  bool fused_epilogue = false;
  // A layout change, not arithmetic: the [m x n] operand's rows become its columns. A systolic
  // array runs it as a matmul against the identity, one pass per 128 x 128 tile (k = 1: a partial
  // contraction tile costs a full one), tensor-engine time and no FLOPs (NKI: nc_transpose); a
  // GPU does it in its load path, free.
  bool transpose = false;

  // The FLOPs the tensor engine executes: `flops` less what a causal product skips. Row i of the
  // m rows meets min(span, i + 1) of the masked dimension (n for CausalDim::N, k for K), so a
  // square product executes (m + 1) / 2m of its dense count. HFU and the ideal compute time count
  // these; MFU keeps the dense convention.
  double executed_flops() const {
    if (causal == CausalDim::None || m <= 0) return flops;
    const double rows = static_cast<double>(m);
    const double span = static_cast<double>(causal == CausalDim::N ? n : k);
    if (!(span > 0)) return flops;
    const double tri = std::min(rows, span);
    const double seen = tri * (tri + 1) / 2 + std::max(0.0, rows - span) * span;
    return flops * seen / (rows * span);
  }
};

}  // namespace trnsim::cost
