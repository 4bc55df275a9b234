// FSDP (parallelism.zero = 3) in build_step and the memory model. Expected values are derived by
// hand in the comments.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "../net/test_clusters.hpp"
#include "test_models.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// h = 256, 2 heads (= KV heads: multi-head attention), SwiGLU f = 512, 2 layers, V = 1024,
// untied embeddings. Per layer 4 h^2 + 3 h f + 2 h = 262,144 + 393,216 + 512 = 655,872
// parameters; the root (embedding, final norm, head) 2 V h + h = 524,544; all of it P = 2 x
// 655,872 + 524,544 = 1,836,288.
constexpr double kLayer = 655872, kRoot = 524544, kAll = 2 * kLayer + kRoot;

ModelSpec model() { return llama(2, 256, 2, 2, 512, 1024); }

ParallelismSpec fsdp(std::int64_t dp) {
  return parallelism(1, 1, dp, false, Recompute::Selective, PipelineSchedule::OneFOneB, 1, 3);
}

}  // namespace

TEST_CASE("fsdp: all-gathers move 2 x and reduce-scatters 1 x the parameter bytes per micro-batch") {
  // dp 4, one micro-batch (global batch 8 = dp 4 x micro-batch 2). Forward gathers the root and
  // both layers, backward gathers them again and reduce-scatters their gradients: bf16 weights
  // and gradients (2 bytes), so the buffers add up to 2 x 2 P and 2 P bytes.
  const StepGraph g = build_step(model(), training(256, 8, 2), fsdp(4), plain_software());
  double gathered = 0, scattered = 0;
  int dp_tasks = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Collective || t.category != Category::DpComm) continue;
    ++dp_tasks;
    const Collective& c = g.collectives[t.index];
    if (c.op == CollectiveOp::AllGather) gathered += c.bytes;
    if (c.op == CollectiveOp::ReduceScatter) scattered += c.bytes;
    CHECK(g.groups_of(c).group_size == 4);
  }
  CHECK(gathered == 2 * 2 * kAll);
  CHECK(scattered == 2 * kAll);
  // 3 gathers forward (root, 2 layers), 3 gathers and 3 reduce-scatters backward; no gradient
  // all-reduce and no all-gather after the optimizer.
  CHECK(dp_tasks == 9);
  // On the wire a ring all-gather or reduce-scatter of S bytes over dp ranks sends S (dp-1)/dp
  // from each rank: per step 2 x 2 P x 3/4 gathered and 2 P x 3/4 reduce-scattered.
  const auto cluster = test::torus_cluster(4, 4, 2, 1);
  const hw::DeviceMap devices(cluster);
  for (const auto op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const net::Schedule s = net::make_schedule(net::Collective{op, {0, 1, 2, 3}, 2 * kAll, net::Algorithm::Ring},
                                               net::Algorithm::Ring, cluster, devices);
    CHECK(s.bytes_sent() / 4 == Approx(2 * kAll * 3 / 4));
  }
}

TEST_CASE("fsdp: a layer's compute waits for its gather, and the next layer's gather is prefetched") {
  // Three layers: the gather of layer i+1 is issued when layer i starts, i.e. it waits for layer
  // i-1's compute (at most two layers gathered), not for layer i's.
  ModelSpec three = model();
  three.layers = 3;
  const StepGraph g = build_step(three, training(256, 8, 2), fsdp(4), plain_software());
  std::vector<std::vector<TaskId>> preds(g.tasks.size());
  for (TaskId i = 0; i < g.tasks.size(); ++i) {
    for (auto s = g.tasks[i].succ_begin; s < g.tasks[i].succ_end; ++s) preds[g.successors[s]].push_back(i);
  }
  auto gather_of = [&](std::int32_t layer) {
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      const auto& t = g.tasks[i];
      if (t.category == Category::DpComm && t.layer == layer && g.collectives[t.index].op == CollectiveOp::AllGather)
        return i;  // the forward's (first) gather
    }
    FAIL("no gather of layer " << layer);
    return TaskId{0};
  };
  auto first_forward = [&](std::int32_t layer) {
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      if (g.tasks[i].kind == TaskKind::Compute && g.tasks[i].layer == layer) return i;
    }
    FAIL("no compute of layer " << layer);
    return TaskId{0};
  };
  for (const std::int32_t layer : {0, 1, 2}) {
    const auto& p = preds[first_forward(layer)];
    CHECK(std::find(p.begin(), p.end(), gather_of(layer)) != p.end());
  }
  auto compute_layers_before = [&](TaskId gather) {
    std::vector<std::int32_t> layers;
    for (TaskId pred : preds[gather]) {
      if (g.tasks[pred].kind == TaskKind::Compute) layers.push_back(g.tasks[pred].layer);
    }
    return layers;
  };
  // Layers 0 and 1 are gathered when the pass starts (no compute of the pass before them).
  CHECK(compute_layers_before(gather_of(1)).empty());
  // Layer 2's gather waits for layer 0's last compute task, and so runs while layer 1 computes.
  CHECK(compute_layers_before(gather_of(2)) == std::vector<std::int32_t>{0});
}

TEST_CASE("fsdp: memory holds the shards plus the gathered root and two layers") {
  // dp 4: weights (P / 4 + root + 2 layers) x 2 bytes; gradients P / 4 in the fp32 accumulation
  // buffer plus one layer's and the root's bf16 gradients before their reduce-scatter; Adam
  // states and the fp32 master copy (12 bytes) sharded: 12 P / 4.
  const MemoryEstimate est = estimate_memory(model(), training(256, 8, 2), fsdp(4), plain_software());
  const StageMemory& s = est.stages.at(0);
  CHECK(s.parameters == kAll);
  CHECK(s.weights == Approx((kAll / 4 + kRoot + 2 * kLayer) * 2));
  CHECK(s.gradients == Approx(kAll / 4 * 4 + (kLayer + kRoot) * 2));
  CHECK(s.optimizer == Approx(12 * kAll / 4));
}

TEST_CASE("zero 2: gradients reduce-scattered layer by layer, updated parameters gathered after the optimizer") {
  // dp 4, one micro-batch: the backward reduce-scatters both layers and the root, 2 P bytes of
  // bf16 gradients; nothing is gathered before compute; after the optimizer the updated bf16
  // parameters, 2 P bytes, are all-gathered in one 25 MB bucket (2 P = 3.7 MB).
  ParallelismSpec p = fsdp(4);
  p.zero = 2;
  const StepGraph g = build_step(model(), training(256, 8, 2), p, plain_software());
  double gathered = 0, scattered = 0;
  int gathers = 0, scatters = 0;
  TaskId optimizer = 0;
  for (TaskId i = 0; i < g.tasks.size(); ++i) {
    if (g.tasks[i].category == Category::Optimizer) optimizer = i;
  }
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Collective || t.category != Category::DpComm) continue;
    const Collective& c = g.collectives[t.index];
    if (c.op == CollectiveOp::AllGather) {
      gathered += c.bytes;
      ++gathers;
    }
    if (c.op == CollectiveOp::ReduceScatter) {
      scattered += c.bytes;
      ++scatters;
    }
  }
  CHECK(scattered == 2 * kAll);
  CHECK(scatters == 3);
  CHECK(gathered == 2 * kAll);
  CHECK(gathers == 1);
  // The gather follows the optimizer.
  bool after_optimizer = false;
  for (auto s = g.tasks[optimizer].succ_begin; s < g.tasks[optimizer].succ_end; ++s) {
    const auto& t = g.tasks[g.successors[s]];
    after_optimizer |= t.category == Category::DpComm && g.collectives[t.index].op == CollectiveOp::AllGather;
  }
  CHECK(after_optimizer);
  // Memory: full bf16 weights; fp32 gradient shards plus one layer's and the root's bf16
  // gradients; optimizer states sharded.
  const StageMemory m = estimate_memory(model(), training(256, 8, 2), p, plain_software()).stages.at(0);
  CHECK(m.weights == 2 * kAll);
  CHECK(m.gradients == Approx(kAll / 4 * 4 + (kLayer + kRoot) * 2));
  CHECK(m.optimizer == Approx(12 * kAll / 4));
}

namespace {

// The model above as a mixture of experts: 4 experts of width 256, top-2, both layers MoE. Per
// layer and rank at tp 1, ep 2: dense = attention 4 h^2 (262,144) + 2 norms (512) + router h x 4
// (1,024) = 263,680; routed experts 2 local x 3 h 256 = 393,216. Stage totals: X = 2 x 393,216 =
// 786,432 expert parameters; D = 2 x 263,680 + root 524,544 = 1,051,904 dense ones.
constexpr double kMoeDense = 263680, kMoeExperts = 393216, kX = 2 * kMoeExperts, kD = 2 * kMoeDense + kRoot;

ModelSpec expert_sharded_model() {
  ModelSpec m = model();
  m.experts = 4;
  m.experts_per_token = 2;
  m.expert_ffn_hidden = 256;
  return m;
}

}  // namespace

TEST_CASE("fsdp: with expert parallelism the experts are gathered and reduce-scattered on their own DP group") {
  // dp 4, ep 2: the experts' data-parallel group has g = dp / ep = 2 ranks; one micro-batch. Each
  // MoE layer gathers its dense parameters on the DP group (4 ranks) and then its experts on the
  // expert-DP group, forward and backward, and reduce-scatters both after its backward: bf16, so
  // the expert gathers' buffers add up to 2 x 2 X bytes and the reduce-scatters' to 2 X.
  ParallelismSpec p = fsdp(4);
  p.ep = 2;
  const StepGraph g = build_step(expert_sharded_model(), training(256, 8, 2), p, plain_software());
  double expert_gathered = 0, expert_scattered = 0, dense_gathered = 0, dense_scattered = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Collective || t.category != Category::DpComm) continue;
    const Collective& c = g.collectives[t.index];
    const bool expert = g.groups_of(c).group_size == 2;
    if (!expert) CHECK(g.groups_of(c).group_size == 4);
    (c.op == CollectiveOp::AllGather ? (expert ? expert_gathered : dense_gathered)
                                     : (expert ? expert_scattered : dense_scattered)) += c.bytes;
  }
  CHECK(expert_gathered == 2 * 2 * kX);
  CHECK(expert_scattered == 2 * kX);
  CHECK(dense_gathered == 2 * 2 * kD);
  CHECK(dense_scattered == 2 * kD);
  // On the wire each rank sends S (g-1)/g of a ring gather of S bytes over g ranks: per step
  // 2 x 2 X x 1/2 bytes of expert gathers (= 2 x expert parameter bytes x (g-1)/g).
  const auto cluster = test::torus_cluster(4, 4, 2, 1);
  const hw::DeviceMap devices(cluster);
  const net::Schedule s = net::make_schedule(
      net::Collective{CollectiveOp::AllGather, {0, 1}, expert_gathered, net::Algorithm::Ring}, net::Algorithm::Ring,
      cluster, devices);
  CHECK(s.bytes_sent() / 2 == Approx(2 * (2 * kX) * 1 / 2));
}

TEST_CASE("fsdp: with expert parallelism memory holds dense shards over dp, expert shards over dp / ep") {
  // dp 4, ep 2 (g = 2): shard = D / 4 + X / 2 = 262,976 + 393,216 = 656,192 parameters. Largest
  // gathered unit u = 263,680 + 393,216 = 656,896 (a layer's dense and local experts), two of
  // them under one layer of prefetch, and the root. Gradients: the fp32 shard plus one layer's
  // and the root's bf16; optimizer 12 bytes per shard parameter.
  ParallelismSpec p = fsdp(4);
  p.ep = 2;
  const double shard = kD / 4 + kX / 2, u = kMoeDense + kMoeExperts;
  CHECK(shard == 656192);
  const StageMemory m = estimate_memory(expert_sharded_model(), training(256, 8, 2), p, plain_software()).stages.at(0);
  CHECK(m.weights == Approx((shard + kRoot + 2 * u) * 2));
  CHECK(m.gradients == Approx(shard * 4 + (u + kRoot) * 2));
  CHECK(m.optimizer == Approx(12 * shard));
  // ZeRO-2: the same gradient and optimizer shards, full weights.
  p.zero = 2;
  const StageMemory z2 = estimate_memory(expert_sharded_model(), training(256, 8, 2), p, plain_software()).stages.at(0);
  CHECK(z2.weights == Approx((kD + kX) * 2));
  CHECK(z2.gradients == Approx(shard * 4 + (u + kRoot) * 2));
  CHECK(z2.optimizer == Approx(12 * shard));
}

TEST_CASE("fsdp: with ep = dp the experts are not sharded and nothing of theirs is gathered") {
  // dp 2, ep 2: each expert lives on one rank of the DP group (g = 1): only the dense parameters
  // move, 2 x 2 D gathered; the experts' shard is all of X.
  ParallelismSpec p = fsdp(2);
  p.ep = 2;
  const StepGraph g = build_step(expert_sharded_model(), training(256, 4, 2), p, plain_software());
  double gathered = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Collective || t.category != Category::DpComm) continue;
    const Collective& c = g.collectives[t.index];
    CHECK(g.groups_of(c).group_size == 2);
    if (c.op == CollectiveOp::AllGather) gathered += c.bytes;
  }
  CHECK(gathered == 2 * 2 * kD);
  const StageMemory m = estimate_memory(expert_sharded_model(), training(256, 4, 2), p, plain_software()).stages.at(0);
  CHECK(m.optimizer == Approx(12 * (kD / 2 + kX)));
}

TEST_CASE("fsdp: prefetch k holds k + 1 gathered layers, at most a pass's layers") {
  // Four layers (P = 4 x 655,872 + 524,544 = 3,148,032), dp 4: weights = (P / 4 + root +
  // min(k + 1, 4) layers) x 2 bytes.
  ModelSpec four = model();
  four.layers = 4;
  const double all = 4 * kLayer + kRoot;
  CHECK(all == 3148032);
  for (const std::int64_t k : {0, 1, 2, 3, 7}) {
    SoftwareSpec sw = plain_software();
    sw.fsdp_prefetch_units = k;
    const StageMemory m = estimate_memory(four, training(256, 8, 2), fsdp(4), sw).stages.at(0);
    const double layers = static_cast<double>(std::min<std::int64_t>(k + 1, 4));
    INFO("k = " << k);
    CHECK(m.weights == Approx((all / 4 + kRoot + layers * kLayer) * 2));
  }
}

TEST_CASE("fsdp: prefetch k issues layer j + k's gather when layer j starts") {
  // Four layers, k = 2: the forward issues the gathers of layers 0, 1, 2 at its start (no compute
  // of the pass before them) and layer 3's after layer 0's compute; k = 0: layer j's after layer
  // j - 1's.
  ModelSpec four = model();
  four.layers = 4;
  const auto waits_for = [&](std::int64_t k) {
    SoftwareSpec sw = plain_software();
    sw.fsdp_prefetch_units = k;
    const StepGraph g = build_step(four, training(256, 8, 2), fsdp(4), sw);
    std::vector<std::vector<TaskId>> preds(g.tasks.size());
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      for (auto s = g.tasks[i].succ_begin; s < g.tasks[i].succ_end; ++s) preds[g.successors[s]].push_back(i);
    }
    // For each layer's forward gather, the layers whose compute it waits for.
    std::vector<std::vector<std::int32_t>> out(4);
    std::vector<bool> seen(4, false);
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      const auto& t = g.tasks[i];
      if (t.category != Category::DpComm || t.layer < 0 || seen[static_cast<std::size_t>(t.layer)] ||
          g.collectives[t.index].op != CollectiveOp::AllGather)
        continue;
      seen[static_cast<std::size_t>(t.layer)] = true;
      for (TaskId pred : preds[i]) {
        const auto& before = g.tasks[pred];
        if (before.kind == TaskKind::Compute) out[static_cast<std::size_t>(t.layer)].push_back(before.layer);
      }
    }
    return out;
  };
  using V = std::vector<std::int32_t>;
  CHECK(waits_for(2) == std::vector<V>{{}, {}, {}, {0}});
  CHECK(waits_for(0) == std::vector<V>{{}, {0}, {1}, {2}});
}

TEST_CASE("fsdp: each micro-batch's gradients are accumulated into the rank's shard only") {
  // 2 micro-batches (global batch 16 = dp 4 x micro-batch 2 x 2) and the default recipe (bf16
  // gradients, fp32 accumulation, no fused accumulation): after each backward a layer's
  // 655,872 gradients are reduce-scattered and the rank adds its 1/4 into the fp32 buffer.
  const StepGraph g = build_step(model(), training(256, 16, 2), fsdp(4), SoftwareSpec{});
  int found = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Compute || t.layer != 0 || t.category != Category::Backward) continue;
    for (const auto& k : g.works[t.index].kernels) {
      if (std::string(k.name) != "grad_accumulate") continue;
      CHECK(k.vector_elements == kLayer / 4);
      ++found;
    }
  }
  CHECK(found == 2);  // once per micro-batch
}
