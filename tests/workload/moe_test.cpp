// Mixture-of-experts layers and expert parallelism (workload/moe_steps.hpp, build_step,
// memory, flops). Expected values are derived by hand in the comments.
#include <catch2/catch.hpp>

#include <string>

#include "../net/test_clusters.hpp"
#include "test_models.hpp"
#include "trnsim/cost/compute_model.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/flops.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// h = 256, 2 heads, 2 layers, vocabulary 1024; 128 experts of width 128, top-32. With b = 2,
// s = 256 (T = 512 tokens per micro-batch), every expert receives T k / E = 512 x 32 / 128 = 128
// rows on average: every matmul dimension is a multiple of 128, so no tile is partial.
ModelSpec moe_model() {
  ModelSpec m = llama(2, 256, 2, 2, 512, 1024);
  m.name = "moe-test";
  m.experts = 128;
  m.experts_per_token = 32;
  m.expert_ffn_hidden = 128;
  return m;
}

bool is_expert_work(const std::string& name) { return name.find(":expert_fc") != std::string::npos; }

double compute_seconds(const StepGraph& g, const cost::ComputeModel& cm, bool experts_only = false) {
  double s = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Compute) continue;
    if (experts_only && !is_expert_work(g.works[t.index].name)) continue;
    s += cm.cost(g.works[t.index].kernels).seconds;
  }
  return s;
}

double expert_flops(const StepGraph& g) {
  double f = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Compute || !is_expert_work(g.works[t.index].name)) continue;
    for (const auto& k : g.works[t.index].kernels) f += k.flops;
  }
  return f;
}

ParallelismSpec ep_plan(std::int64_t dp, std::int64_t ep, int zero = 0) {
  ParallelismSpec p = parallelism(1, 1, dp, false, Recompute::None, PipelineSchedule::OneFOneB, 1, zero);
  p.ep = ep;
  return p;
}

}  // namespace

TEST_CASE("moe: a MoE model with ep unset runs its router and experts (EP 1), never as dense") {
  const StepGraph g = build_step(moe_model(), training(256, 2, 2), parallelism(1, 1, 1, false, Recompute::None),
                                 plain_software());
  int routers = 0, experts = 0, dense_mlps = 0, all_to_alls = 0;
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::Collective && g.collectives[t.index].op == CollectiveOp::AllToAll) ++all_to_alls;
    if (t.kind != TaskKind::Compute || t.category != Category::Forward) continue;
    for (const auto& k : g.works[t.index].kernels) {
      const std::string n = k.name;
      routers += n == "router";
      experts += n == "expert_fc1";
      dense_mlps += n == "fc1";
    }
  }
  // One micro-batch (global batch 2 = micro-batch 2), 2 layers: one router and one expert GEMM
  // group per layer; no dense MLP; at ep = 1 no all-to-all leaves the rank.
  CHECK(routers == 2);
  CHECK(experts == 2);
  CHECK(dense_mlps == 0);
  CHECK(all_to_alls == 0);
}

TEST_CASE("moe: with perfect balance and free links a MoE layer costs its active FLOPs") {
  hw::Calibration cal;
  cal.matmul_efficiency = 0.5;
  const cost::ComputeModel cm(tensor_only_chip(), cal, hw::Dtype::Bf16, 1);
  const double rate = 2.0 * 128 * 128 * 1e9 * 0.5;  // FLOP/s on full tiles
  // Active FLOPs: k experts of width f_e per token do what one dense SwiGLU MLP of width k f_e
  // does (3 GEMMs of T x h x k f_e), so the MoE model costs its dense twin of ffn = 32 x 128 =
  // 4096 plus the router: forward 2 T h E, backward 2 x that (dgrad and wgrad); elementwise work
  // (top-k, permute, combine, SwiGLU) is free on this chip.
  ModelSpec dense = llama(2, 256, 2, 2, 32 * 128, 1024);
  const TrainingSpec t = training(256, 2, 2);
  const ParallelismSpec p = parallelism(1, 1, 1, false, Recompute::None);
  const double T = 512, h = 256, E = 128, L = 2;
  const double router = 3 * 2 * T * h * E * L / rate;
  const double moe_s = compute_seconds(build_step(moe_model(), t, p, plain_software()), cm);
  const double dense_s = compute_seconds(build_step(dense, t, p, plain_software()), cm);
  CHECK(moe_s - dense_s == Approx(router).epsilon(1e-9));
  // And the expert GEMMs alone: 3 (forward, dgrad, wgrad) x 3 GEMMs x 2 T k h f_e per layer.
  const double experts = 3 * 3 * 2 * T * 32 * h * 128 * L / rate;
  CHECK(compute_seconds(build_step(moe_model(), t, p, plain_software()), cm, true) == Approx(experts).epsilon(1e-9));
}

TEST_CASE("moe: load imbalance and the capacity factor set the busiest rank's expert work") {
  hw::Calibration cal;
  const cost::ComputeModel cm(tensor_only_chip(), cal, hw::Dtype::Bf16, 1);
  const ParallelismSpec p = parallelism(1, 1, 1, false, Recompute::None);
  const TrainingSpec balanced = training(256, 2, 2);
  const StepGraph base = build_step(moe_model(), balanced, p, plain_software());
  SECTION("imbalance 2.0 doubles the expert part of the layer (128 -> 256 rows per expert, full tiles)") {
    TrainingSpec t = balanced;
    t.moe_imbalance = 2.0;
    const StepGraph g = build_step(moe_model(), t, p, plain_software());
    CHECK(compute_seconds(g, cm, true) == Approx(2 * compute_seconds(base, cm, true)).epsilon(1e-12));
    // The rest of the step is unchanged.
    CHECK(compute_seconds(g, cm) - compute_seconds(g, cm, true) ==
          Approx(compute_seconds(base, cm) - compute_seconds(base, cm, true)).epsilon(1e-12));
  }
  SECTION("capacity 1.5 with dropping caps imbalance 2.0 at 1.5 x the mean (192 rows)") {
    TrainingSpec t = balanced;
    t.moe_imbalance = 2.0;
    t.moe_capacity_factor = 1.5;
    CHECK(expert_flops(build_step(moe_model(), t, p, plain_software())) == Approx(1.5 * expert_flops(base)));
  }
  SECTION("padding to capacity 1.5 runs 1.5 x the mean even when balanced, and sends padded buffers") {
    TrainingSpec t = balanced;
    t.moe_capacity_factor = 1.5;
    SoftwareSpec s = plain_software();
    s.moe_pad_to_capacity = true;
    CHECK(expert_flops(build_step(moe_model(), t, p, s)) == Approx(1.5 * expert_flops(base)));
    CHECK(expert_load(t, s) == 1.5);
  }
}

TEST_CASE("moe: dispatch and combine are all-to-alls of T k h e per rank on the EP group") {
  // dp 8 = 2 EP groups of ep 4; T = 512 tokens per micro-batch, k = 32, h = 256, bf16 (e = 2):
  // each all-to-all buffer is T k h e = 512 x 32 x 256 x 2 = 8,388,608 bytes; forward runs the
  // dispatch and the combine, backward their two reverses: 4 per MoE layer and micro-batch.
  const StepGraph g = build_step(moe_model(), training(256, 16, 2), ep_plan(8, 4), plain_software(),
                                 BuildOptions{.symmetric = false});
  const double buffer = 512.0 * 32 * 256 * 2;
  int on_rank0 = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Collective || t.category != Category::EpComm) continue;
    const Collective& c = g.collectives[t.index];
    CHECK(c.op == CollectiveOp::AllToAll);
    CHECK(c.bytes == buffer);
    const GroupSet& gs = g.groups_of(c);
    REQUIRE(gs.count() == 1);
    // EP groups: 4 consecutive DP coordinates (tp = 1: consecutive ranks).
    const std::int32_t first = t.rank / 4 * 4;
    CHECK(std::vector<std::int32_t>(gs.group(0).begin(), gs.group(0).end()) ==
          std::vector<std::int32_t>{first, first + 1, first + 2, first + 3});
    if (t.rank == 0) ++on_rank0;
  }
  // 1 micro-batch (16 sequences / (dp 8 x micro-batch 2)), 2 MoE layers, 4 all-to-alls each.
  CHECK(on_rank0 == 8);
  // On the network, the direct all-to-all keeps 1/ep of the buffer and sends the rest:
  // per rank T k h e (ep - 1) / ep = 8,388,608 x 3 / 4 = 6,291,456 bytes.
  const auto cluster = test::torus_cluster(4, 4, 2, 1);
  const hw::DeviceMap devices(cluster);
  const net::Schedule s = net::make_schedule(
      net::Collective{CollectiveOp::AllToAll, {0, 1, 2, 3}, buffer, net::Algorithm::Direct}, net::Algorithm::Direct,
      cluster, devices);
  CHECK(s.bytes_sent() / 4 == Approx(buffer * 3 / 4));
}

TEST_CASE("moe: routed experts' gradients sync over their own data-parallel group (dp / ep)") {
  // dp 8, ep 4: rank 0's experts are replicated on DP coordinates 0 and 4, its expert-DP group.
  // Expert gradients per rank: 2 layers x 128 / 4 experts x 3 h f_e = 2 x 32 x 3 x 256 x 128 =
  // 6,291,456 parameters, bf16 gradients: 12,582,912 bytes over all its buckets.
  const StepGraph g = build_step(moe_model(), training(256, 16, 2), ep_plan(8, 4), plain_software(),
                                 BuildOptions{.symmetric = false});
  double expert_bytes = 0;
  for (const auto& t : g.tasks) {
    if (t.rank != 0 || t.category != Category::DpComm) continue;
    const GroupSet& gs = g.groups_of(g.collectives[t.index]);
    if (gs.group_size != 2) continue;
    CHECK(std::vector<std::int32_t>(gs.group(0).begin(), gs.group(0).end()) == std::vector<std::int32_t>{0, 4});
    expert_bytes += g.collectives[t.index].bytes;
  }
  CHECK(expert_bytes == 2.0 * 32 * 3 * 256 * 128 * 2);
}

TEST_CASE("moe: at ep = 1 the experts' gradients sync with the dense ones over the whole DP group") {
  // Every rank holds all 128 experts: 2 layers x 128 x 3 h f_e = 2 x 128 x 3 x 256 x 128 =
  // 25,165,824 expert parameters, and the 1,115,392 dense ones of the test below (pp 1: the whole
  // model on rank 0); bf16 gradients, 2 bytes: 52,562,432 bytes, every bucket on the DP group of 8.
  // (Before, the experts went to an expert-DP group that does not exist at ep = 1: a crash.)
  const StepGraph g = build_step(moe_model(), training(256, 16, 2), ep_plan(8, 1), plain_software(),
                                 BuildOptions{.symmetric = false});
  double bytes = 0;
  for (const auto& t : g.tasks) {
    if (t.rank != 0 || t.category != Category::DpComm) continue;
    CHECK(g.groups_of(g.collectives[t.index]).group_size == 8);
    bytes += g.collectives[t.index].bytes;
  }
  CHECK(bytes == 2.0 * (2.0 * 128 * 3 * 256 * 128 + 1115392));
}

TEST_CASE("moe: expert weights, gradients and optimizer states are sharded by EP, ZeRO-1 over each expert's DP group") {
  const ModelSpec m = moe_model();
  const TrainingSpec t = training(256, 16, 2);
  const MemoryEstimate est = estimate_memory(m, t, ep_plan(8, 4, 1), plain_software());
  const StageMemory& s = est.stages.at(0);
  // Experts per rank: 2 layers x 128 / 4 x 3 x 256 x 128 = 6,291,456. Dense: per layer attention
  // 4 h^2 = 262,144 (2 heads = 2 KV heads: MHA), router h E = 32,768, two RMSNorms 512; the
  // embedding and the untied head 2 x 1024 x 256 = 524,288, the final norm 256:
  // 2 x 295,424 + 524,288 + 256 = 1,115,392.
  const double experts = 6291456, dense = 1115392;
  CHECK(s.expert_parameters == experts);
  CHECK(s.parameters == experts + dense);
  // bf16 weights (2), fp32 accumulation (4); Adam: fp32 master + 2 moments = 12 bytes, sharded
  // over dp = 8 for the dense parameters and over dp / ep = 2 for the experts.
  CHECK(s.weights == 2 * (experts + dense));
  CHECK(s.gradients == 4 * (experts + dense));
  CHECK(s.optimizer == Approx(12 * dense / 8 + 12 * experts / 2));
}

TEST_CASE("moe: model FLOPs count the active experts and the router") {
  // Per sequence: 3 x [L (2 s (2 h q + 2 h kv + k 3 h f_e + h E) + 4 s^2 q) + 2 s h V] with
  // q = kv = h = 256, s = 256, k = 32, f_e = 128, E = 128, L = 2, V = 1024; global batch 2.
  const double s = 256, h = 256, L = 2, V = 1024;
  const double layer = 2 * s * (2 * h * h + 2 * h * h + 32 * 3 * h * 128 + h * 128) + 4 * s * s * h;
  CHECK(model_flops_per_step(moe_model(), training(256, 2, 2)) == Approx(2 * 3 * (L * layer + 2 * s * h * V)));
}

TEST_CASE("moe: plans the MoE layers cannot run are errors naming the field") {
  const TrainingSpec t = training(256, 16, 2);
  auto message = [&](const ModelSpec& m, const TrainingSpec& tr, const ParallelismSpec& p) -> std::string {
    try {
      check_plan(m, tr, p, 0);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(message(llama(2, 256, 2, 2, 512, 1024), t, ep_plan(8, 2)), Catch::StartsWith("/parallelism/ep:"));
  CHECK_THAT(message(moe_model(), t, ep_plan(8, 3)), Catch::StartsWith("/parallelism/ep: 3 does not divide dp (8)"));
  ParallelismSpec no_sp = parallelism(2, 1, 4, false, Recompute::None);
  CHECK_THAT(message(moe_model(), t, no_sp), Catch::StartsWith("/parallelism/sequence_parallel:"));
  TrainingSpec imbalanced = t;
  imbalanced.moe_imbalance = 1.5;
  CHECK_THAT(message(llama(2, 256, 2, 2, 512, 1024), imbalanced, ep_plan(8, 1)),
             Catch::StartsWith("/training/moe_imbalance:"));
}
