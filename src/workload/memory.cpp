#include "trnsim/workload/memory.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "context_steps.hpp"
#include "narrow.hpp"
#include "trnsim/workload/model_math.hpp"
#include "trnsim/workload/pipeline_schedule.hpp"
#include "trnsim/units.hpp"

namespace trnsim::workload {
namespace {

using narrow::dbl;

}  // namespace

const StageMemory& MemoryEstimate::peak() const {
  std::size_t best = 0;
  for (std::size_t i = 1; i < stages.size(); ++i) {
    if (stages[i].total() > stages[best].total()) best = i;
  }
  return stages.at(best);
}

LayerParameters stage_parameters(const ModelSpec& model, const Plan& plan, std::int64_t positions,
                                 std::int64_t stage) {
  const LayerDims d = layer_dims(model, plan.tp, plan.ep);
  LayerParameters p;
  if (d.experts == 0) {
    // Every layer alike: count times one (the dense models' figures as before MoE layers existed).
    p.dense = dbl(plan.stage_layers(model.layers, stage)) * layer_parameters(d, 0).dense;
  } else {
    for (std::int64_t k = stage; k < plan.chunks(); k += plan.pp) {
      const LayerParameters c =
          layers_parameters(d, plan.chunk_first_layer(model.layers, k), plan.chunk_layers(model.layers, k));
      p.dense += c.dense;
      p.experts += c.experts;
    }
  }
  double& dense = p.dense;
  if (stage == 0) dense += embedding_parameters(d, positions, model.learned_positions);
  if (stage == plan.pp - 1) {
    dense += norm_parameters(d);
    if (!model.tied_embeddings || plan.pp > 1) dense += dbl(d.vocab) * dbl(d.hidden);
  }
  return p;
}

namespace {

// TorchTitan's op policy (memory.hpp): the outputs of one of the two TP reduce-scatters of a layer
// (sigma e T h), kept under SP with tp > 1.
double op_policy_scatter_bytes(const Plan& plan, double full) {
  return plan.sequence_parallel && plan.tp > 1 ? full / dbl(plan.tp) : 0;
}

// Its attention half: the layer input, the q and v outputs, the attention output, the
// reduce-scatter after the output projection.
double op_policy_attention_bytes(const ModelSpec& model, const Plan& plan, const TrainingSpec& training) {
  const LayerDims d = layer_dims(model, plan.tp);
  const double e = activation_bytes(training.precision);
  const double t = dbl(plan.micro_batch) * dbl(plan.local_seq(training.seq_len));
  const double sigma = plan.sequence_parallel ? 1.0 / dbl(plan.tp) : 1.0;
  return sigma * e * t * dbl(d.hidden) + e * t * (2 * dbl(d.q_width()) + dbl(d.k_width())) +
         op_policy_scatter_bytes(plan, e * t * dbl(d.hidden));
}

}  // namespace

double layer_activation_bytes(const ModelSpec& model, const Plan& plan, const TrainingSpec& training,
                              Recompute mode) {
  const LayerDims d = layer_dims(model, plan.tp);
  const double e = activation_bytes(training.precision);
  const double t = dbl(plan.micro_batch) * dbl(plan.local_seq(training.seq_len));
  const double h = dbl(d.hidden);
  const double sigma = plan.sequence_parallel ? 1.0 / dbl(plan.tp) : 1.0;
  if (full_recompute_interval(mode) > 0) return sigma * e * t * h;
  if (mode == Recompute::SelectiveOp) {
    return op_policy_attention_bytes(model, plan, training) +
           (d.swiglu ? e * t * dbl(d.ffn) + e * t * h : e * t * dbl(d.ffn)) + op_policy_scatter_bytes(plan, e * t * h);
  }
  double bytes = sigma * (4 * e * t * h + (d.dropout ? 2 * t * h : 0));
  // Q, K, V and the attention output; under MLA also the two latents before and after their norms
  // and the shared rotary key (the inputs the up-projections' and norms' backward read).
  bytes += e * t * dbl(d.q_width() + d.o_width()) + e * t * dbl(d.k_width() + d.v_width());
  if (d.mla) bytes += e * t * dbl(2 * d.q_lora + 2 * d.kv_lora + d.qk_rope);
  bytes += (d.swiglu ? 3 : 2) * e * t * dbl(d.ffn);
  // Only materialized attention keeps the s x s probabilities (and dropout mask) for backward.
  // Under CP: cp blocks of (s / cp)^2 (context_steps.hpp).
  if (mode == Recompute::None && training.attention == hw::AttentionKernel::Materialized) {
    const double s = dbl(plan.local_seq(training.seq_len));
    bytes += dbl(plan.cp) * dbl(plan.micro_batch) * dbl(d.heads) * s * s * (d.dropout ? 2 * e + 1 : e);
  }
  return bytes;
}

double moe_layer_activation_bytes(const ModelSpec& model, const Plan& plan, const TrainingSpec& training,
                                  Recompute mode, double expert_load) {
  const double dense = layer_activation_bytes(model, plan, training, mode);
  if (full_recompute_interval(mode) > 0) return dense;
  const LayerDims d = layer_dims(model, plan.tp, plan.ep);
  const double e = activation_bytes(training.precision);
  const double t = dbl(plan.micro_batch) * dbl(plan.local_seq(training.seq_len));
  const double h = dbl(d.hidden);
  const double sigma = plan.sequence_parallel ? 1.0 / dbl(plan.tp) : 1.0;
  const double m = d.swiglu ? 3 : 2;
  const double k = dbl(d.experts_per_token);
  const double rows = expert_load * t * k;
  const double f = dbl(d.expert_ffn);
  double moe = sigma * e * t * h + 4 * sigma * t * dbl(d.experts) + e * rows * h + m * e * rows * f +
               e * sigma * t * k * h;
  if (d.shared_experts > 0) moe += sigma * e * t * h + m * e * t * dbl(d.shared_experts) * f;
  // The op policy keeps the expert block as selective does (layer_steps.cpp: not rerun).
  if (mode == Recompute::SelectiveOp) return op_policy_attention_bytes(model, plan, training) + moe;
  return dense - (sigma * e * t * h + m * e * t * dbl(d.ffn)) + moe;
}

namespace {

// ZeRO-2 and -3 (build_step.cpp, FsdpUnit): gradients and optimizer states sharded over dp x cp
// (the routed experts over their dp x cp / ep), besides the unsharded gradients of one layer
// (before its reduce-scatter) and of the root unit (embedding, final norm and head). ZeRO-3 (FSDP)
// shards the parameters too, besides the gathered root (held through a pass) and k + 1 layers
// (the one computing and the k prefetched, at most a chunk's layers).
void sharded_state(const ModelSpec& model, const Plan& plan, const LayerDims& d, std::int64_t stage,
                   const PrecisionRecipe& precision, double state, std::int64_t prefetch, StageMemory& m) {
  double layers = 0, unit = 0;
  std::int64_t chunk_max = 0;
  for (std::int64_t k = stage; k < plan.chunks(); k += plan.pp) {
    const std::int64_t first = plan.chunk_first_layer(model.layers, k);
    chunk_max = std::max(chunk_max, plan.chunk_layers(model.layers, k));
    for (std::int64_t l = first; l < first + plan.chunk_layers(model.layers, k); ++l) {
      const double one = layer_parameters(d, l).total();
      layers += one;
      unit = std::max(unit, one);
    }
  }
  const double root = m.parameters - layers;
  const double dp = dbl(plan.grad_dp());
  // At ep = 1 the experts share the dense parameters' group: p / dp as one figure.
  const double shard = plan.ep == 1 ? m.parameters / dp
                                    : (m.parameters - m.expert_parameters) / dp +
                                          m.expert_parameters / dbl(plan.grad_dp() / plan.ep);
  const double gathered = dbl(std::min(prefetch + 1, chunk_max));
  if (plan.zero == 3) m.weights = (shard + root + gathered * unit) * bytes(precision.weights);
  m.gradients = shard * bytes(precision.grad_accumulation) + (unit + root) * bytes(precision.gradients);
  m.optimizer = shard * state;
}

}  // namespace

MemoryEstimate estimate_memory(const ModelSpec& model, const TrainingSpec& training,
                               const ParallelismSpec& parallelism, const SoftwareSpec& software) {
  const Plan plan = make_plan(model, training, parallelism, 0);
  const PrecisionRecipe precision = software.precision_for(training.precision);
  const double moments = training.optimizer == Optimizer::Sgd ? 1 : 2;
  const LayerDims d = layer_dims(model, plan.tp, plan.ep);
  const std::int64_t positions = model.max_positions > 0 ? model.max_positions : training.seq_len;
  const double e = activation_bytes(training.precision);
  const double t = dbl(plan.micro_batch) * dbl(plan.local_seq(training.seq_len));
  const double sigma = plan.sequence_parallel ? 1.0 / dbl(plan.tp) : 1.0;
  // K/V in flight under CP (memory.hpp): ring, two blocks of K and V and, in the backward, of dK
  // and dV (fp32 accumulators, 4 bytes per element: context_steps.hpp); all-gather, the
  // sequence's K and V and their gradients.
  const double kv = e * t * dbl(d.k_width() + d.v_width());
  const double grad_kv = steps::kRingGradientBytes * t * dbl(d.k_width() + d.v_width());
  const double kv_in_flight = plan.cp == 1                                     ? 0
                              : software.cp_attention == CpAttention::AllGather ? 2 * dbl(plan.cp) * kv
                                                                                : 2 * kv + 2 * grad_kv;
  // The largest layer's kept activations (a MoE layer's may exceed a dense one's).
  const double layer_kept =
      d.experts == 0 ? layer_activation_bytes(model, plan, training, Recompute::Selective)
                     : std::max(layer_activation_bytes(model, plan, training, Recompute::Selective),
                                moe_layer_activation_bytes(model, plan, training, Recompute::Selective,
                                                           expert_load(training, software)));
  const double layer_held = layer_activation_bytes(model, plan, training, plan.recompute);
  const double moe_held = d.experts == 0 ? 0
                          : moe_layer_activation_bytes(model, plan, training, plan.recompute, expert_load(training, software));
  MemoryEstimate est;
  for (std::int64_t p = 0; p < plan.pp; ++p) {
    StageMemory m;
    m.stage = p;
    const LayerParameters split = stage_parameters(model, plan, positions, p);
    m.parameters = split.total();
    m.expert_parameters = split.experts;
    // Gradients live in the accumulation buffer across the step; the optimizer holds the master
    // copy (if any) and its moments, sharded over data parallelism under ZeRO-1 (the routed
    // experts over their own data-parallel group).
    m.weights = m.parameters * bytes(precision.weights);
    m.gradients = m.parameters * bytes(precision.grad_accumulation);
    const double state = bytes(precision.master_weights) + moments * bytes(precision.optimizer_states);
    m.optimizer = split.dense * state / (plan.zero == 1 ? dbl(plan.grad_dp()) : 1.0);
    if (split.experts > 0) m.optimizer += split.experts * state / (plan.zero == 1 ? dbl(plan.grad_dp() / plan.ep) : 1.0);
    if (plan.zero >= 2 && plan.grad_dp() > 1) {
      sharded_state(model, plan, d, p, precision, state, software.fsdp_prefetch_units, m);
    }
    const auto order = stage_schedule(plan.schedule, plan.pp, p, plan.micro_batches, plan.virtual_stages);
    m.units_in_flight = peak_units_in_flight(order);
    // Chunks of one stage may differ by a layer (uneven split): weigh each unit by its chunk, a
    // MoE layer by its bytes over a dense layer's.
    std::vector<double> chunk_layers;
    bool recomputes_a_layer = full_recompute_interval(plan.recompute) == 1;
    for (std::int64_t c = 0; c < plan.virtual_stages && full_recompute_interval(plan.recompute) > 1; ++c) {
      // Full-every-n: each layer held under its own mode (full or none), weighed in bytes.
      const std::int64_t vs = c * plan.pp + p;
      const std::int64_t first = plan.chunk_first_layer(model.layers, vs);
      const double load = expert_load(training, software);
      double held = 0;
      for (std::int64_t l = first; l < first + plan.chunk_layers(model.layers, vs); ++l) {
        const Recompute mode = plan.layer_mode(model.layers, vs, l);
        recomputes_a_layer = recomputes_a_layer || mode == Recompute::Full;
        held += d.moe_layer(l) ? moe_layer_activation_bytes(model, plan, training, mode, load)
                               : layer_activation_bytes(model, plan, training, mode);
      }
      chunk_layers.push_back(held / layer_held);
    }
    for (std::int64_t c = 0; c < plan.virtual_stages && full_recompute_interval(plan.recompute) <= 1; ++c) {
      const std::int64_t first = plan.chunk_first_layer(model.layers, c * plan.pp + p);
      const std::int64_t count = plan.chunk_layers(model.layers, c * plan.pp + p);
      const std::int64_t moe_layers = d.experts == 0 ? 0 : count - std::clamp<std::int64_t>(d.dense_layers - first, 0, count);
      double weight = dbl(count);
      if (moe_layers > 0) {
        weight += dbl(moe_layers) * (moe_held / layer_held - 1);
      }
      chunk_layers.push_back(weight);
    }
    m.activations = peak_weight_in_flight(order, chunk_layers) * layer_held;
    if (recomputes_a_layer) m.activations += layer_kept;
    if (p == 0) {
      std::vector<ScheduleUnit> first;
      for (const auto& u : order) if (u.chunk == 0) first.push_back(u);
      m.embedding_logits += dbl(peak_units_in_flight(first)) * sigma * e * t * dbl(d.hidden);
    }
    if (p == plan.pp - 1) {
      std::vector<ScheduleUnit> last;
      for (const auto& u : order) if (u.chunk == plan.virtual_stages - 1) last.push_back(u);
      const double head = sigma * e * t * dbl(d.hidden) + t * dbl(d.vocab) * (e + 4);
      m.embedding_logits += dbl(peak_units_in_flight(last)) * head;
    }
    m.workspace = layer_kept + 2 * e * t * dbl(d.hidden) + kv_in_flight;
    est.stages.push_back(m);
  }
  return est;
}

double rank_memory_capacity(const hw::ChipSpec& chip, int physical_cores_per_rank) {
  return chip.hbm_bytes * physical_cores_per_rank / std::max(1, chip.physical_cores);
}

std::vector<std::string> memory_findings(const MemoryEstimate& estimate, double capacity) {
  using units::kGiB;
  std::vector<std::string> out;
  for (const auto& m : estimate.stages) {
    if (m.total() <= capacity) continue;
    out.push_back(fmt::format("out of memory: stage {} needs {:.1f} GiB per rank of {:.1f} GiB: weights {:.1f}, "
                              "gradients {:.1f}, optimizer {:.1f}, activations {:.1f} ({} units in flight), "
                              "embedding/logits {:.1f}, workspace {:.1f}",
                              m.stage, m.total() / kGiB, capacity / kGiB, m.weights / kGiB, m.gradients / kGiB,
                              m.optimizer / kGiB, m.activations / kGiB, m.units_in_flight,
                              m.embedding_logits / kGiB, m.workspace / kGiB));
  }
  return out;
}

}  // namespace trnsim::workload
