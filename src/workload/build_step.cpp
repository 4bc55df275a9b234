#include "trnsim/workload/build_step.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <utility>

#include "chunk_program.hpp"
#include "collective_calls.hpp"
#include "graph_edges.hpp"
#include "narrow.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/model_math.hpp"
#include "trnsim/workload/pipeline_schedule.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::workload {
namespace {

constexpr TaskId kNone = std::numeric_limits<TaskId>::max();
constexpr std::uint32_t kNoCollective = std::numeric_limits<std::uint32_t>::max();
using I32 = std::int32_t;
using I64 = std::int64_t;

I32 i32(I64 v) { return static_cast<I32>(v); }
using narrow::dbl;
using narrow::idx;

class Builder {
 public:
  Builder(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& par,
          const SoftwareSpec& software, const BuildOptions& opts)
      : model_(model), training_(training), software_(software),
        precision_(software.precision_for(training.precision)), opts_(opts),
        plan_(make_plan(model, training, par, opts.total_ranks)),
        layout_(plan_.tp, plan_.grad_dp(), plan_.pp, plan_.rank_order, plan_.ep, plan_.cp),
        dims_(layer_dims(model, plan_.tp, plan_.ep)),
        calls_(layout_, opts.symmetric && opts.replicas, graph_),
        virtual_count_(plan_.pp * plan_.virtual_stages),
        positions_(model.max_positions > 0 ? model.max_positions : training.seq_len) {}

  StepGraph run() {
    build_programs();
    choose_simulated_ranks();
    const std::size_t units = idx(2 * plan_.virtual_stages * plan_.micro_batches);
    first_.assign(sims_.size() * units, kNone);
    last_ = first_;
    send_ = first_;
    std::size_t per_pipeline = 0;  // tasks of one rank of each stage, to reserve once
    for (const auto& prog : programs_) per_pipeline += prog.fwd.size() + prog.bwd.size() + 2;
    const std::size_t estimate =
        per_pipeline * idx(plan_.micro_batches) * sims_.size() / idx(plan_.pp) + 64 * sims_.size();
    graph_.tasks.reserve(estimate);
    edges_.reserve(estimate + estimate / 8);
    for (std::size_t si = 0; si < sims_.size(); ++si) emit_rank(si);
    link_pipeline();
    finish();
    return std::move(graph_);
  }

 private:
  struct Programs {
    std::vector<Segment> fwd, bwd;
  };

  StepContext context() const {
    StepContext c;
    c.d = dims_;
    c.micro_batch = plan_.micro_batch;
    c.seq_len = plan_.local_seq(training_.seq_len);
    c.cp = plan_.cp;
    c.cp_attention = software_.cp_attention;
    c.act_bytes = activation_bytes(training_.precision);
    c.sequence_parallel = plan_.sequence_parallel && plan_.tp > 1;
    c.recompute = plan_.recompute;
    c.attention = training_.attention.value_or(software_.kernels.attention);
    c.learned_positions = model_.learned_positions;
    c.precision = precision_;
    c.kernels = software_.kernels;
    c.overlap_tp_comm = software_.overlap.tp_comm;
    c.micro_batches = plan_.micro_batches;
    c.positions = positions_;
    c.head_parameters = head_params();
    c.expert_load = expert_load(training_, software_);
    c.gradient_shard = sharded_gradients() ? 1.0 / dbl(plan_.grad_dp()) : 1.0;
    c.expert_gradient_shard = sharded_gradients() && plan_.ep > 1 ? 1.0 / dbl(plan_.grad_dp() / plan_.ep)
                                                                  : c.gradient_shard;
    c.dispatch_factor = software_.moe_pad_to_capacity && training_.moe_capacity_factor > 0
                            ? training_.moe_capacity_factor : 1.0;
    return c;
  }

  double head_params() const {
    double p = norm_parameters(dims_);
    if (!model_.tied_embeddings || plan_.pp > 1) p += dbl(dims_.vocab) * dbl(dims_.hidden);
    return p;
  }

  void build_programs() {
    const StepContext c = context();
    WorkTable table(graph_.works);
    programs_.resize(idx(virtual_count_));
    for (I64 vs = 0; vs < virtual_count_; ++vs) {
      Steps fwd, bwd;
      std::vector<GradientMark> marks;
      const I64 first_layer = plan_.chunk_first_layer(model_.layers, vs);
      const I64 per_chunk = plan_.chunk_layers(model_.layers, vs);  // uneven split: plan.hpp
      if (vs == 0) embedding_forward(c, fwd);
      for (I64 l = first_layer; l < first_layer + per_chunk; ++l) layer_forward(c, i32(l), Category::Forward, fwd);
      if (vs == virtual_count_ - 1) {
        head_forward(c, fwd);
        head_backward(c, bwd);
        marks.push_back({bwd.size() - 1, head_params()});
      }
      for (I64 l = first_layer + per_chunk - 1; l >= first_layer; --l) {
        StepContext lc = c;  // full-every-n: this layer's own mode
        lc.recompute = plan_.layer_mode(model_.layers, vs, l);
        layer_backward(lc, i32(l), bwd);
        const LayerParameters lp = layer_parameters(dims_, l);
        marks.push_back({bwd.size() - 1, lp.total(), lp.experts});
      }
      if (vs == 0) {
        embedding_backward(c, bwd);
        marks.push_back({bwd.size() - 1, embedding_parameters(dims_, positions_, model_.learned_positions)});
      }
      programs_[idx(vs)].fwd = cut_segments(fwd, {}, table);
      programs_[idx(vs)].bwd = cut_segments(bwd, marks, table);
    }
    // The optimizer's Work per stage (its parameter shard differs between stages).
    for (I64 p = 0; p < plan_.pp; ++p) {
      const LayerParameters sp = stage_parameters(model_, plan_, positions_, p);
      // ZeRO-1 shards the dense parameters over dp x cp, the routed experts over their dp x cp / ep.
      const double n = zero_active() ? sp.dense / dbl(plan_.grad_dp()) + sp.experts / dbl(plan_.grad_dp() / plan_.ep)
                                     : sp.total();
      Work w{"optimizer", {gradient_norm_kernel(precision_, n), optimizer_kernel(precision_, training_.optimizer, n)},
             -1};
      optimizer_work_.push_back(table.intern(std::move(w)));
    }
  }

  // The gradient group is dp x cp (Plan::grad_dp): CP ranks hold the same parameters.
  bool zero_active() const { return plan_.zero >= 1 && plan_.grad_dp() > 1; }
  // ZeRO-2 and -3: gradients reduce-scattered layer by layer in every backward unit (FsdpUnit).
  bool sharded_gradients() const { return plan_.zero >= 2 && plan_.grad_dp() > 1; }
  // ZeRO-3 (FSDP): parameters gathered layer by layer too.
  bool fsdp() const { return plan_.zero == 3 && plan_.grad_dp() > 1; }

  // Parameters outside the layers in virtual stage vs (embedding; final norm and LM head): FSDP's
  // root unit.
  double root_params(I64 vs) const {
    double p = 0;
    if (vs == 0) p += embedding_parameters(dims_, positions_, model_.learned_positions);
    if (vs == virtual_count_ - 1) p += head_params();
    return p;
  }

  void choose_simulated_ranks() {
    if (opts_.symmetric) {
      for (I64 p = 0; p < plan_.pp; ++p) sims_.push_back(layout_.rank(0, 0, p));
    } else {
      for (I32 r = 0; r < layout_.size(); ++r) sims_.push_back(r);
    }
    graph_.simulated_ranks = sims_;
    graph_.total_ranks = layout_.size();
    graph_.index_ranks();  // after total_ranks, which bounds its table
  }

  std::size_t unit_slot(std::size_t si, bool forward, I64 chunk, I64 mb) const {
    const I64 per_rank = 2 * plan_.virtual_stages * plan_.micro_batches;
    return si * idx(per_rank) + idx(((forward ? 0 : 1) * plan_.virtual_stages + chunk) * plan_.micro_batches + mb);
  }

  TaskId add_task(const Task& t) {
    graph_.tasks.push_back(t);
    return static_cast<TaskId>(graph_.tasks.size() - 1);
  }

  struct RankState {
    I32 rank = 0;
    RankLayout::Coord coord;
    TaskId chain = kNone;  // last task on the rank's compute chain
    TaskId dp_chain = kNone;  // last task on its DpComm stream (launch order)
    std::uint32_t tp_calls = 0, dp_calls = 0, tied_calls = 0, ep_calls = 0, expert_dp_calls = 0, cp_calls = 0,
                  cp_ring_calls = 0;
  };

  TaskId emit_chained(RankState& st, Task t) {
    const TaskId id = add_task(t);
    if (st.chain != kNone) edges_.add(st.chain, id);
    st.chain = id;
    return id;
  }

  // FSDP (ZeRO-3) in one unit (a micro-batch's forward or backward of a chunk), wrapping each
  // layer and the root (embedding, final norm, head) as TorchTitan does: the root's parameters
  // are all-gathered over DP when the pass starts and held through it; each layer's before its
  // first segment. Prefetch k (SoftwareSpec::fsdp_prefetch_units): the pass issues the gathers of
  // its first k + 1 layers when it starts, and layer j + k's when layer j starts, i.e. after layer
  // j-1's compute, so at most k + 1 layers are gathered (k = 1, FSDP2's default: the gather of
  // layer j+1 waits for layer j-1 to finish; k = 0: every gather waits for the previous layer,
  // exposed). With expert parallelism (ep > 1) a MoE layer's routed experts are gathered and
  // reduce-scattered on their own data-parallel group (GroupKind::ExpertDp, dp x cp / ep ranks,
  // nothing when that is 1), after its dense parameters on the DP group; the layer waits for
  // both (the second follows the first on the DP stream). In a backward unit each layer's
  // gradients are reduce-scattered once its last segment ends, the root's at the unit's end. The
  // unit's first gathers wait for the compute before the unit: they are exposed, as FSDP2's first
  // gather of a pass is. Per micro-batch:
  // every parameter gathered twice (forward, backward) and reduce-scattered once. ZeRO-2 runs the
  // same reduce-scatters (every micro-batch's gradients into the rank's shard, as DeepSpeed's
  // stage 2 reduces during each backward) without the gathers, and all-gathers the updated
  // parameters after the optimizer in gradient buckets, as ZeRO-1.
  struct FsdpUnit {
    std::vector<I32> layers;  // in the unit's order
    std::vector<TaskId> gathers;
    std::int64_t current = -1;  // index into layers of the layer being emitted
    bool started = false;
    double root = 0;            // root parameters in the unit
    TaskId root_gather = kNone;
  };

  // One collective of layer `layer`'s parameters (dense and experts together at ep = 1; with
  // ep > 1 the dense ones on DP, then the experts on their DP group if it has more than one rank),
  // after the compute chain; returns the last task emitted.
  TaskId fsdp_collective(RankState& st, CollectiveOp op, double element_bytes, I32 layer, I32 micro_batch) {
    const LayerParameters lp = layer_parameters(dims_, layer);
    if (plan_.ep == 1 || lp.experts == 0) {
      return emit_dp_collective(st, GroupKind::Dp, op, lp.total() * element_bytes, st.chain, layer, micro_batch);
    }
    TaskId last = emit_dp_collective(st, GroupKind::Dp, op, lp.dense * element_bytes, st.chain, layer, micro_batch);
    if (plan_.grad_dp() / plan_.ep > 1) {
      last = emit_dp_collective(st, GroupKind::ExpertDp, op, lp.experts * element_bytes, st.chain, layer, micro_batch);
    }
    return last;
  }

  void fsdp_gather(RankState& st, FsdpUnit& f, std::size_t i, I32 micro_batch) {
    if (i >= f.layers.size() || !fsdp()) return;
    f.gathers[i] = fsdp_collective(st, CollectiveOp::AllGather, workload::bytes(precision_.weights), f.layers[i],
                                   micro_batch);
  }

  void fsdp_reduce(RankState& st, const FsdpUnit& f, std::size_t i, I32 micro_batch) {
    fsdp_collective(st, CollectiveOp::ReduceScatter, workload::bytes(precision_.gradients), f.layers[i], micro_batch);
  }

  // Prefetch depth, at most the unit's layers (SoftwareSpec::fsdp_prefetch_units).
  std::size_t prefetch(const FsdpUnit& f) const {
    return std::min(f.layers.size(), static_cast<std::size_t>(plan_.prefetch_depth(software_.fsdp_prefetch_units)));
  }

  // Before the segment `seg` of a unit: the gathers (and the previous layer's reduce-scatter) due
  // at a layer boundary; returns the gather the segment must wait for, or kNone.
  TaskId fsdp_before(RankState& st, FsdpUnit& f, const Segment& seg, bool backward, I32 micro_batch) {
    if (!f.started) {
      f.started = true;
      if (f.root > 0 && fsdp()) {
        const double size = f.root * workload::bytes(precision_.weights);
        f.root_gather = emit_dp_collective(st, GroupKind::Dp, CollectiveOp::AllGather, size, st.chain, -1, micro_batch);
      }
      for (std::size_t i = 0; i <= prefetch(f); ++i) fsdp_gather(st, f, i, micro_batch);
    }
    if (seg.layer < 0) return f.root_gather;
    const auto i = static_cast<std::size_t>(f.current);
    if (f.current >= 0 && seg.layer == f.layers[i]) return kNone;
    if (f.current >= 0) {
      if (backward) fsdp_reduce(st, f, i, micro_batch);
      fsdp_gather(st, f, i + 1 + prefetch(f), micro_batch);
    }
    ++f.current;
    return f.gathers[static_cast<std::size_t>(f.current)];
  }

  // The end of a backward unit under FSDP: the last layer's and the root's reduce-scatters.
  void fsdp_after_backward(RankState& st, const FsdpUnit& f, I32 micro_batch) {
    if (f.current >= 0) fsdp_reduce(st, f, static_cast<std::size_t>(f.current), micro_batch);
    if (f.root > 0) {
      const double size = f.root * workload::bytes(precision_.gradients);
      emit_dp_collective(st, GroupKind::Dp, CollectiveOp::ReduceScatter, size, st.chain, -1, micro_batch);
    }
  }

  void emit_rank(std::size_t si) {
    RankState st;
    st.rank = sims_[si];
    st.coord = layout_.coord(st.rank);
    const I64 p = st.coord.pp;
    const auto order = stage_schedule(plan_.schedule, plan_.pp, p, plan_.micro_batches, plan_.virtual_stages);
    std::vector<std::size_t> last_backward(idx(plan_.virtual_stages), 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (!order[i].forward) last_backward[idx(order[i].chunk)] = i;
    }
    std::vector<GradientReady> gradients;  // in completion order
    Task base;
    base.rank = st.rank;
    base.stage = i32(p);
    // Per program (virtual stage, forward or backward) and segment: its collective, the same
    // (group, op, size) at every micro-batch on this rank, so looked up once (the lookup in
    // CollectiveCalls' ordered map per task was 3 % of a sweep's plan of llama3.1-405b-trn2u).
    // Ids are still made in the order the segments are first emitted.
    std::vector<std::vector<std::uint32_t>> collective_of(2 * idx(virtual_count_));
    // This rank's groups' call lists, by GroupKind, found at their first call.
    std::array<std::vector<std::uint32_t>*, kGroupKinds> group_calls{};

    for (std::size_t ui = 0; ui < order.size(); ++ui) {
      const ScheduleUnit& u = order[ui];
      const I64 vs = u.chunk * plan_.pp + p;
      const auto& program = u.forward ? programs_[idx(vs)].fwd : programs_[idx(vs)].bwd;
      std::vector<std::uint32_t>& collectives = collective_of[2 * idx(vs) + (u.forward ? 0 : 1)];
      if (collectives.empty()) collectives.assign(program.size(), kNoCollective);
      const bool grads = !u.forward && ui == last_backward[idx(u.chunk)];
      TaskId first = kNone;
      // An overlapped TP collective hangs off the chain: the next compute segment runs alongside
      // it, the one after that waits for both (Segment::overlapped).
      TaskId overlapped = kNone, join = kNone;
      FsdpUnit unit;
      if (sharded_gradients()) {
        for (const Segment& seg : program) {
          if (seg.layer >= 0 && (unit.layers.empty() || unit.layers.back() != seg.layer)) unit.layers.push_back(seg.layer);
        }
        unit.gathers.assign(unit.layers.size(), kNone);
        unit.root = root_params(vs);
      }
      for (std::size_t j = 0; j < program.size(); ++j) {
        const Segment& seg = program[j];
        const TaskId gathered = sharded_gradients() ? fsdp_before(st, unit, seg, !u.forward, u.micro_batch) : kNone;
        Task t = base;
        t.category = seg.category;
        t.layer = seg.layer;
        t.micro_batch = u.micro_batch;
        if (seg.collective) {
          const bool ring = seg.context && seg.op == CollectiveOp::SendRecv;
          const GroupKind group = seg.expert    ? GroupKind::Ep
                                  : ring        ? GroupKind::CpRing
                                  : seg.context ? GroupKind::Cp
                                                : GroupKind::Tp;
          t.kind = TaskKind::Collective;
          t.stream = Stream::TpComm;
          t.category = seg.expert ? Category::EpComm : seg.context ? Category::CpComm : Category::TpComm;
          std::uint32_t& collective = collectives[j];
          if (collective == kNoCollective) collective = calls_.collective(group, st.coord, seg.op, seg.bytes);
          t.index = collective;
          std::vector<std::uint32_t>*& calls = group_calls[static_cast<std::size_t>(group)];
          if (calls == nullptr) calls = &calls_.instance_calls(group, st.coord);
          t.call = calls_.call_in(*calls, seg.expert    ? st.ep_calls
                                          : ring        ? st.cp_ring_calls
                                          : seg.context ? st.cp_calls
                                                        : st.tp_calls);
        } else {
          t.index = seg.work;
        }
        TaskId id = kNone;
        if (seg.collective && seg.overlapped) {
          id = add_task(t);
          if (st.chain != kNone) edges_.add(st.chain, id);
          overlapped = id;
        } else {
          id = emit_chained(st, t);
          if (join != kNone) edges_.add(join, id);
          join = std::exchange(overlapped, kNone);
        }
        if (gathered != kNone) edges_.add(gathered, id);
        if (first == kNone) first = id;
        if (grads && seg.gradient_params > 0) gradients.push_back({id, seg.gradient_params, seg.expert_gradient_params});
      }
      // Every overlapped collective is followed by its wgrad and the layer's next segment.
      if (join != kNone || overlapped != kNone) throw InternalError("build_step: an overlapped collective ends a unit");
      if (!u.forward && unit.started) fsdp_after_backward(st, unit, u.micro_batch);
      const std::size_t slot = unit_slot(si, u.forward, u.chunk, u.micro_batch);
      first_[slot] = first;
      last_[slot] = st.chain;
      const I64 next_vs = u.forward ? vs + 1 : vs - 1;
      if (next_vs >= 0 && next_vs < virtual_count_ && next_vs % plan_.pp != p) {
        Task t = base;
        t.kind = TaskKind::Transfer;
        t.index = std::numeric_limits<std::uint32_t>::max();  // no replicas, unless finish() names a set
        t.stream = Stream::PpComm;
        t.category = Category::PpComm;
        t.micro_batch = u.micro_batch;
        t.peer = layout_.rank(st.coord.tp, st.coord.dp, next_vs % plan_.pp);
        t.bytes = activation_message_bytes();
        const TaskId id = add_task(t);
        edges_.add(st.chain, id);
        send_[slot] = id;
        transfers_.push_back(id);
      }
    }
    emit_gradient_sync(st, gradients);
  }

  // Activation (or its gradient) of one micro-batch crossing a stage boundary, per TP rank (its
  // s / cp tokens under CP): sharded along the sequence under SP, the full tensor otherwise.
  double activation_message_bytes() const {
    const double full = dbl(plan_.micro_batch) * dbl(plan_.local_seq(training_.seq_len)) * dbl(model_.hidden) *
                        activation_bytes(training_.precision);
    return plan_.sequence_parallel && plan_.tp > 1 ? full / dbl(plan_.tp) : full;
  }

  // A gradient completion: after `task`, `params` have their gradient, `experts` of them routed experts'.
  struct GradientReady {
    TaskId task;
    double params, experts;
  };

  // One layer's MLA parameters replicated over TP: h (q_lora + kv_lora + qk_rope) of the two
  // down-projections and q_lora + kv_lora of the latent norms' gains.
  double mla_replicated_parameters() const {
    return dbl(dims_.hidden) * dbl(dims_.q_lora + dims_.kv_lora + dims_.qk_rope) + dbl(dims_.q_lora + dims_.kv_lora);
  }

  // A collective on the rank's DpComm stream, after `after` (kNone: nothing) and the stream's
  // previous task, on the group of `kind`.
  TaskId emit_dp_collective(RankState& st, GroupKind kind, CollectiveOp op, double bytes, TaskId after,
                            I32 layer = -1, I32 micro_batch = -1) {
    Task t;
    t.kind = TaskKind::Collective;
    t.stream = Stream::DpComm;
    t.category = Category::DpComm;
    t.rank = st.rank;
    t.stage = i32(st.coord.pp);
    t.layer = layer;
    t.micro_batch = micro_batch;
    t.index = calls_.collective(kind, st.coord, op, bytes);
    t.call = calls_.call(kind, st.coord,
                         kind == GroupKind::Tied       ? st.tied_calls
                         : kind == GroupKind::ExpertDp ? st.expert_dp_calls
                         : kind == GroupKind::Tp       ? st.tp_calls
                                                       : st.dp_calls);
    const TaskId id = add_task(t);
    if (after != kNone) edges_.add(after, id);
    if (st.dp_chain != kNone) edges_.add(st.dp_chain, id);
    st.dp_chain = id;
    return id;
  }

  // Data-parallel gradient reduction in buckets of gradient_bucket_bytes: each bucket as soon as
  // its gradients are complete (overlapping the rest of the backward pass), or every bucket after
  // the last backward task (DpReduction::AfterBackward). With ep > 1, routed experts' gradients go
  // in buckets of their own on their data-parallel group (dp x cp / ep ranks; none when that is
  // 1); at ep = 1 every rank holds every expert, and their gradients go with the dense ones, as
  // fsdp_collective sends them (there is no expert-DP group then: CollectiveCalls has none).
  void emit_gradient_sync(RankState& st, const std::vector<GradientReady>& gradients) {
    const double gb = bytes(precision_.gradients);
    const bool after_backward = software_.overlap.dp_reduction == DpReduction::AfterBackward;
    const TaskId backward_end = st.chain;
    std::vector<std::pair<GroupKind, double>> buckets;  // group and parameters, for the ZeRO-1/2 all-gathers
    // Under ZeRO-2 and FSDP every gradient was reduce-scattered in its backward unit
    // (fsdp_after_backward); ZeRO-2 still all-gathers the updated parameters in buckets.
    if (plan_.grad_dp() > 1 && !fsdp()) {
      const CollectiveOp op = zero_active() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
      const bool experts_apart = plan_.ep > 1;
      const bool expert_sync = experts_apart && plan_.grad_dp() / plan_.ep > 1;
      double pending = 0, pending_experts = 0;
      for (std::size_t i = 0; i < gradients.size(); ++i) {
        const double experts = experts_apart ? gradients[i].experts : 0;
        pending += gradients[i].params - experts;
        pending_experts += experts;
        const bool last = i + 1 == gradients.size();
        const TaskId after = after_backward ? backward_end : gradients[i].task;
        if (pending * gb >= training_.gradient_bucket_bytes || last) {
          if (!sharded_gradients()) emit_dp_collective(st, GroupKind::Dp, op, pending * gb, after);
          buckets.emplace_back(GroupKind::Dp, pending);
          pending = 0;
        }
        if (expert_sync && (pending_experts * gb >= training_.gradient_bucket_bytes || (last && pending_experts > 0))) {
          if (!sharded_gradients()) emit_dp_collective(st, GroupKind::ExpertDp, op, pending_experts * gb, after);
          buckets.emplace_back(GroupKind::ExpertDp, pending_experts);
          pending_experts = 0;
        }
      }
    }
    const bool tied_copy = model_.tied_embeddings && plan_.pp > 1 &&
                           (st.coord.pp == 0 || st.coord.pp == plan_.pp - 1);
    if (tied_copy) {
      const double bytes = dbl(dims_.vocab) * dbl(dims_.hidden) * gb;
      emit_dp_collective(st, GroupKind::Tied, CollectiveOp::AllReduce, bytes, st.chain);
    }
    // Multi-head latent attention under TP (model_math.hpp): the down-projections W_dq, W_dkv
    // and the two latent norms are replicated on every TP rank, and since the latents' input
    // gradients come from each rank's own heads, their weight gradients are partial sums over the
    // TP group. They are all-reduced over TP once per step, after the data-parallel reduction and
    // before the optimizer, as Megatron-Core's finalize_model_grads all-reduces the gradients of
    // parameters replicated over TP (layer norms under sequence parallelism, MLA's down-
    // projections; _allreduce_layernorm_grads / _allreduce_non_tensor_model_parallel_grads):
    // one coalesced call per stage, not one per layer and micro-batch (the gradients accumulate
    // over the micro-batches first). Under ZeRO-2/3 each rank holds only its 1 / (dp x cp)
    // shard of them by then, which is what it all-reduces.
    if (dims_.mla && plan_.tp > 1) {
      double replicated = 0;
      for (I64 k = st.coord.pp; k < plan_.chunks(); k += plan_.pp)
        replicated += dbl(plan_.chunk_layers(model_.layers, k)) * mla_replicated_parameters();
      if (sharded_gradients()) replicated /= dbl(plan_.grad_dp());
      emit_dp_collective(st, GroupKind::Tp, CollectiveOp::AllReduce, replicated * gb, st.chain);
    }
    Task opt;
    opt.category = Category::Optimizer;
    opt.rank = st.rank;
    opt.stage = i32(st.coord.pp);
    opt.index = optimizer_work_[idx(st.coord.pp)];
    const TaskId opt_id = emit_chained(st, opt);
    if (st.dp_chain != kNone) edges_.add(st.dp_chain, opt_id);
    if (zero_active() && !fsdp()) {
      const double wb = bytes(precision_.weights);
      for (const auto& [group, params] : buckets) {
        emit_dp_collective(st, group, CollectiveOp::AllGather, params * wb, opt_id);
      }
    }
  }

  // Cross-stage edges: each unit's first task waits for its producer on the neighbouring virtual
  // stage (the sender's Transfer, or the unit itself when both chunks live on this rank).
  void link_pipeline() {
    for (std::size_t si = 0; si < sims_.size(); ++si) {
      const auto c = layout_.coord(sims_[si]);
      for (I64 chunk = 0; chunk < plan_.virtual_stages; ++chunk) {
        const I64 vs = chunk * plan_.pp + c.pp;
        for (bool forward : {true, false}) {
          const I64 from = forward ? vs - 1 : vs + 1;
          if (from < 0 || from >= virtual_count_) continue;
          const I64 from_stage = from % plan_.pp;
          const I64 from_chunk = from / plan_.pp;
          const std::size_t sender = graph_.rank_slot(layout_.rank(c.tp, c.dp, from_stage));
          for (I64 mb = 0; mb < plan_.micro_batches; ++mb) {
            const TaskId consumer = first_[unit_slot(si, forward, chunk, mb)];
            const std::size_t producer_slot = unit_slot(sender, forward, from_chunk, mb);
            const TaskId producer = from_stage == c.pp ? last_[producer_slot] : send_[producer_slot];
            edges_.add(producer, consumer);
          }
        }
      }
    }
  }

  void finish() {
    if (opts_.symmetric) {
      // Every transfer from one stage to another has the same replicas: one list per such pair.
      std::map<std::pair<I64, I64>, std::uint32_t> sets;
      for (TaskId id : transfers_) {
        Task& t = graph_.tasks[id];
        const I64 to = layout_.coord(t.peer).pp;
        const auto [at, fresh] = sets.try_emplace({t.stage, to}, static_cast<std::uint32_t>(graph_.replica_sets.size()));
        t.index = at->second;
        if (!fresh) continue;
        auto& list = graph_.replica_sets.emplace_back();
        if (!opts_.replicas) continue;
        list.reserve(static_cast<std::size_t>(layout_.dp() * plan_.tp - 1));
        for (I64 d = 0; d < layout_.dp(); ++d) {
          for (I64 tp = 0; tp < plan_.tp; ++tp) {
            if (tp == 0 && d == 0) continue;
            list.emplace_back(layout_.rank(tp, d, t.stage), layout_.rank(tp, d, to));
          }
        }
      }
    }
    edges_.to_csr(graph_);
    graph_.findings = layout_findings(layout_, opts_.ranks_per_instance);
  }

  const ModelSpec& model_;
  const TrainingSpec& training_;
  const SoftwareSpec& software_;
  PrecisionRecipe precision_;
  BuildOptions opts_;
  Plan plan_;
  RankLayout layout_;
  LayerDims dims_;
  StepGraph graph_;
  CollectiveCalls calls_;
  I64 virtual_count_;
  I64 positions_;
  std::vector<Programs> programs_;
  std::vector<std::uint32_t> optimizer_work_;
  std::vector<I32> sims_;
  std::vector<TaskId> first_, last_, send_;
  std::vector<TaskId> transfers_;
  EdgeList edges_;
};

}  // namespace

StepGraph build_step(const ModelSpec& model, const TrainingSpec& training, const ParallelismSpec& parallelism,
                     const SoftwareSpec& software, const BuildOptions& options) {
  return Builder(model, training, parallelism, software, options).run();
}

}  // namespace trnsim::workload
