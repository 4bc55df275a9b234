#pragma once
// One kernel's work, hardware-independent: what the workload layer asks of a core. The cost layer
// turns it into time per engine (cost::ComputeModel).
#include <cstdint>

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

// One kernel's work, hardware-independent; cost::ComputeModel turns it into time per engine.
struct Kernel {
  OpClass op = OpClass::Elementwise;
  // Tensor-engine part: `batch` independent products C[m x n] = A[m x k] * B[k x n].
  std::int64_t m = 0, n = 0, k = 0, batch = 0;
  double vector_elements = 0;  // element operations on the vector engine (GPU: CUDA cores)
  double scalar_elements = 0;  // transcendental element operations on the scalar engine (exp, gelu)
  double hbm_bytes = 0;        // bytes read + written in HBM
  double flops = 0;            // useful FLOPs (2mnk per product + elementwise), for MFU/HFU
  bool low_precision = true;   // runs at the training dtype's matmul rate (false: fp32)
};

}  // namespace trnsim::cost
