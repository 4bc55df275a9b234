#pragma once
// The attention core of one layer (scores, softmax, dropout, weighted values) in the two
// implementations a training stack uses: flash-style (the s x s scores stay on chip) and
// materialized (the scores make round trips through HBM between separate kernels).
// Internal to the workload layer.
#include "step_emitter.hpp"

namespace trnsim::workload::steps {

// Forward of the attention core of one micro-batch on one TP rank. Under the flash kernel the
// probabilities are never stored; under the materialized one they are written to HBM (and kept
// for the backward pass when nothing is recomputed).
void attention_forward(const StepContext& c, Emitter& em);
// What the backward pass recomputes of the attention core when the layer's activations are
// kept (recompute none or selective): the materialized kernel recomputes its whole forward
// (selective recompute only: under none the probabilities are stored); the flash kernel only
// rebuilds the probabilities, S = Q K^T with the saved row statistics (none or selective alike:
// it never stores them), not the output P V.
void attention_rebuild(const StepContext& c, Emitter& em);
// Whether the backward pass runs attention_rebuild: under selective recompute (Megatron's, and
// TorchTitan's op policy, which keeps the attention output but not the probabilities), and under
// none with the flash kernel (full recompute replays the whole forward instead).
bool rebuilds_attention(const StepContext& c);
// Backward of the attention core; its forward (recomputed or stored) precedes it.
void attention_backward(const StepContext& c, Emitter& em);

}  // namespace trnsim::workload::steps
