#pragma once
// Building blocks of the step builders (layer_steps.cpp, attention_steps.cpp): kernel constructors
// and the Emitter that appends kernels and tensor-parallel collectives to a step list.
// Internal to the workload layer.
#include <utility>

#include "layer_steps.hpp"
#include "narrow.hpp"

namespace trnsim::workload::steps {

using cost::CausalDim;
using cost::Kernel;
using cost::OpClass;

using narrow::dbl;

inline Kernel matmul(const char* name, OpClass op, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
              double e) {
  // Each operand read once and the result written once: activations do not stay in SBUF across kernels.
  return Kernel{.name = name, .op = op, .m = m, .n = n, .k = k, .batch = batch,
                .hbm_bytes = e * dbl(batch) * (dbl(m) * dbl(k) + dbl(k) * dbl(n) + dbl(m) * dbl(n)),
                .flops = 2.0 * dbl(m) * dbl(n) * dbl(k) * dbl(batch)};
}

// Weight gradient dW[in x out] = X^T dY over the micro-batch's tokens. When the software fuses
// gradient accumulation into the GEMM (beta = 1), the kernel reads the accumulation buffer and
// writes it back in its format instead of writing a fresh gradient.
inline Kernel wgrad(const StepContext& c, const char* name, std::int64_t in, std::int64_t out, std::int64_t tokens,
                    double e) {
  Kernel kr = matmul(name, OpClass::Matmul, in, out, tokens, 1, e);
  if (c.kernels.fused_grad_accumulation) {
    kr.hbm_bytes += (2 * bytes(c.precision.grad_accumulation) - e) * dbl(in) * dbl(out);
  }
  return kr;
}

inline Kernel elementwise(const char* name, OpClass op, double vector, double scalar, double hbm) {
  return Kernel{.name = name, .op = op, .vector_elements = vector, .scalar_elements = scalar, .hbm_bytes = hbm};
}

class Emitter {
 public:
  Emitter(const StepContext& c, std::int32_t layer, Category cat, Steps& out)
      : c_(c), layer_(layer), cat_(cat), out_(out) {}
  void kernel(Kernel k) {
    Step s;
    s.kind = Step::Kind::Kernel;
    s.category = cat_;
    s.layer = layer_;
    s.kernel = std::move(k);
    out_.push_back(std::move(s));
  }
  void collective(CollectiveOp op, double bytes, bool overlapped = false) {
    communication(c_.d.tp == 1 ? Step::Kind::Cut : Step::Kind::TpCollective, op, bytes, overlapped);
  }
  // An all-to-all on the expert-parallel group; a task boundary only at ep = 1.
  void expert_collective(double bytes) {
    communication(c_.d.ep == 1 ? Step::Kind::Cut : Step::Kind::EpCollective, CollectiveOp::AllToAll, bytes, false);
  }
  // A K/V exchange on the context-parallel group (context_steps.hpp); only at cp > 1.
  void context_collective(CollectiveOp op, double bytes, bool overlapped) {
    communication(Step::Kind::CpCollective, op, bytes, overlapped);
  }
  void cut() {
    Step s;
    s.kind = Step::Kind::Cut;
    s.category = cat_;
    s.layer = layer_;
    out_.push_back(std::move(s));
  }
  // Megatron f/g operators around a tensor-parallel region, on a full-sequence activation of
  // T*h elements: entering the region all-gathers it under sequence parallelism (identity without),
  // leaving it reduce-scatters it (all-reduce without).
  void enter_region() {
    if (c_.sequence_parallel) collective(CollectiveOp::AllGather, full_activation());
  }
  // The cross-entropy all-reduce: no task boundary of its own at tp = 1.
  void loss_collective(double bytes) {
    if (c_.d.tp > 1) collective(CollectiveOp::AllReduce, bytes);
  }
  void leave_region() {
    collective(c_.sequence_parallel ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, full_activation());
  }
  // Backward of enter_region: reduce-scatter (SP) or all-reduce of the input gradient, after the
  // region's first GEMM's dgrad; then that GEMM's wgrad, alongside the collective when the software
  // overlaps TP communication (Overlap::tp_comm), before it otherwise.
  // With the dgrad given: the region's input, when leave_region_backward_deferring_input left its
  // gather here, is gathered alongside that dgrad (Megatron's LinearWithGradAccumulationAndAsync-
  // Communication: the all-gather is started before the input-gradient GEMM, waited for before the
  // weight gradient).
  void enter_region_backward(Kernel dgrad, Kernel wgrad) {
    if (std::exchange(input_gather_deferred_, false)) {
      collective(CollectiveOp::AllGather, full_activation(), true);
      kernel(std::move(dgrad));
      cut();
    } else {
      kernel(std::move(dgrad));
    }
    enter_region_backward(std::move(wgrad));
  }
  void enter_region_backward(Kernel wgrad) {
    const CollectiveOp op = c_.sequence_parallel ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
    if (!c_.overlap_tp_comm) {
      kernel(std::move(wgrad));
      collective(op, full_activation());
      return;
    }
    collective(op, full_activation(), true);
    kernel(std::move(wgrad));
    cut();
  }
  // Backward of leave_region: all-gather of the output gradient (SP), identity without. Under
  // SP the region's input is stored sharded and gathered again here for the weight gradients
  // (Korthikanti et al. 2022, section 4.2.2): one all-gather call of both tensors.
  void leave_region_backward(int tensors) {
    if (c_.sequence_parallel) collective(CollectiveOp::AllGather, tensors * full_activation());
  }
  // As leave_region_backward(2), for a region whose input only its first GEMM's weight gradient
  // reads: when the software overlaps TP communication, that gather moves to
  // enter_region_backward(dgrad, wgrad), which the caller must emit next for this region.
  void leave_region_backward_deferring_input() {
    if (!c_.sequence_parallel || !c_.overlap_tp_comm) {
      leave_region_backward(2);
      return;
    }
    leave_region_backward(1);
    input_gather_deferred_ = true;
  }
  double full_activation() const { return dbl(c_.tokens()) * dbl(c_.d.hidden) * c_.act_bytes; }

 private:
  void communication(Step::Kind kind, CollectiveOp op, double bytes, bool overlapped) {
    Step s;
    s.kind = kind;
    s.category = cat_;
    s.layer = layer_;
    s.op = op;
    s.bytes = bytes;
    s.overlapped = overlapped;
    out_.push_back(std::move(s));
  }

  const StepContext& c_;
  bool input_gather_deferred_ = false;
  std::int32_t layer_;
  Category cat_;
  Steps& out_;
};

// Adding one micro-batch's gradients of `parameters` weights into the accumulation buffer: read the
// fresh gradient and the buffer, write the buffer (1 vector op per parameter). Nothing when the
// GEMMs accumulate themselves, or when one micro-batch writes gradients already in the buffer's format.
inline bool accumulates_separately(const StepContext& c) {
  return !c.kernels.fused_grad_accumulation &&
         (c.micro_batches > 1 || c.precision.grad_accumulation != c.precision.gradients);
}
// Under ZeRO-2 and FSDP the rank adds into its shard only (StepContext::gradient_shard; the routed
// experts' `expert_parameters` of `all_parameters` by expert_gradient_shard).
inline Kernel gradient_accumulation(const StepContext& c, double all_parameters, double expert_parameters = 0) {
  const double parameters = c.expert_gradient_shard == c.gradient_shard
                                ? all_parameters * c.gradient_shard
                                : (all_parameters - expert_parameters) * c.gradient_shard +
                                      expert_parameters * c.expert_gradient_shard;
  const double traffic = parameters * (bytes(c.precision.gradients) + 2 * bytes(c.precision.grad_accumulation));
  return elementwise("grad_accumulate", OpClass::Elementwise, parameters, 0, traffic);
}

// Tokens a norm, residual or dropout touches on this rank: the sequence is sharded under SP.
inline double local_tokens(const StepContext& c) {
  return c.sequence_parallel ? dbl(c.tokens()) / dbl(c.d.tp) : dbl(c.tokens());
}

// Norm: LayerNorm 6 vector ops per element (sum, square-sum, subtract, scale, gain, bias),
// RMSNorm 4 (square-sum, scale, gain, and the reduction add); one rsqrt per token on the scalar
// engine. Backward: twice the forward count plus the residual-gradient add.
inline Kernel norm(const StepContext& c, const char* name, bool backward) {
  const double n = local_tokens(c) * dbl(c.d.hidden);
  const double ops = c.d.rmsnorm ? 4 : 6;
  const double e = c.act_bytes;
  if (!backward) return elementwise(name, OpClass::Norm, ops * n, local_tokens(c), 2 * e * n);
  return elementwise(name, OpClass::Norm, (2 * ops + 1) * n, local_tokens(c), 4 * e * n);
}

// An MLP's activation on n elements of its intermediate: GELU, one scalar-engine activation per
// element; SwiGLU, silu on the scalar engine and the gate product on the vector engine. Backward:
// derivative lookup and products.
inline Kernel activation(const StepContext& c, double n, bool backward) {
  const double e = c.act_bytes;
  if (!c.d.swiglu) {
    return backward ? elementwise("gelu_bwd", OpClass::Activation, n, n, 3 * e * n)
                    : elementwise("gelu", OpClass::Activation, 0, n, 2 * e * n);
  }
  return backward ? elementwise("swiglu_bwd", OpClass::Activation, 4 * n, n, 5 * e * n)
                  : elementwise("swiglu", OpClass::Activation, n, n, 3 * e * n);
}

// The first MLP GEMM's width for an intermediate of f: gate and up together under SwiGLU.
inline std::int64_t fc1_width(const LayerDims& d, std::int64_t f) { return d.swiglu ? 2 * f : f; }

// Residual add (+ dropout: mask multiply and a 1-byte mask written).
inline Kernel residual(const StepContext& c, const char* name) {
  const double n = local_tokens(c) * dbl(c.d.hidden);
  const double e = c.act_bytes;
  return elementwise(name, OpClass::Elementwise, c.d.dropout ? 2 * n : n, 0,
                     3 * e * n + (c.d.dropout ? n : 0));
}

}  // namespace trnsim::workload::steps
