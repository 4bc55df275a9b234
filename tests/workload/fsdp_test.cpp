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

TEST_CASE("fsdp: ZeRO-2 and -3 with expert parallelism are rejected by name") {
  auto message = [](const ModelSpec& m, const ParallelismSpec& p) -> std::string {
    try {
      check_plan(m, training(256, 8, 2), p, 0);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  ModelSpec moe = model();
  moe.experts = 4;
  moe.experts_per_token = 2;
  for (const int zero : {2, 3}) {
    ParallelismSpec ep = fsdp(4);
    ep.zero = zero;
    ep.ep = 2;
    CHECK_THAT(message(moe, ep), Catch::StartsWith("/parallelism/zero: ZeRO-" + std::to_string(zero) +
                                                   " with expert parallelism"));
  }
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
