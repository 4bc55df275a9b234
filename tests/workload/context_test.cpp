// Context parallelism (workload/context_steps.hpp, build_step, memory, plan checks). Expected
// values are derived by hand in the comments.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "test_models.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// h = 256, 4 heads of 64, 2 KV heads, 2 layers. With tp = 2 each rank holds 1 KV head (kv_r = 64);
// seq_len 1024 over cp = 4 leaves 256 tokens per rank. One ring transfer (K and V of the rank's
// tokens, bf16): 2 x (s / cp) x kv_heads x head_dim x e / tp = 2 x 256 x 2 x 64 x 2 / 2 = 65,536 bytes.
ModelSpec cp_model() { return llama(2, 256, 4, 2, 512, 1024); }
constexpr double kBlock = 2.0 * 256 * 2 * 64 * 2 / 2;

ParallelismSpec cp_plan(std::int64_t tp, std::int64_t cp, std::int64_t dp, int zero = 0) {
  ParallelismSpec p = parallelism(tp, 1, dp, false, Recompute::None, PipelineSchedule::OneFOneB, 1, zero);
  p.cp = cp;
  return p;
}

// The CP exchanges of `rank` on `layer`, in emission order: (op, bytes).
std::vector<std::pair<CollectiveOp, double>> exchanges(const StepGraph& g, std::int32_t rank, std::int32_t layer) {
  std::vector<std::pair<CollectiveOp, double>> out;
  for (const auto& t : g.tasks) {
    if (t.rank != rank || t.layer != layer || t.category != Category::CpComm) continue;
    REQUIRE(t.kind == TaskKind::Collective);
    REQUIRE(t.stream == Stream::TpComm);
    out.emplace_back(g.collectives[t.index].op, g.collectives[t.index].bytes);
  }
  return out;
}

std::string message(const ModelSpec& m, const TrainingSpec& t, const ParallelismSpec& p, std::int64_t ranks = 0) {
  try {
    check_plan(m, t, p, ranks);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("context parallelism: the ring exchanges cp - 1 K/V blocks per attention forward, with real neighbours") {
  // tp 2, cp 4, dp 1: 8 ranks, one micro-batch (global batch 1). Forward: cp - 1 = 3 transfers of
  // one block. Backward (context_steps.hpp): alongside block 0 the K/V of block 1; alongside blocks
  // 1 and 2 the next K/V and the previous dK/dV; alongside block 3 the dK/dV of block 2; then the
  // last dK/dV home: 4 + 1 transfers = (cp - 1) K/V + cp dK/dV blocks. The dK/dV accumulators are
  // fp32 (context_steps.hpp): 4 bytes per element against bf16 K/V's 2, so a dK/dV block is
  // 2 x kBlock = 131,072 bytes, and a transfer carrying both 3 x kBlock.
  const StepGraph g = build_step(cp_model(), training(1024, 1, 1), cp_plan(2, 4, 1), plain_software());
  const auto sr = CollectiveOp::SendRecv;
  const double grad = 2 * kBlock;
  const std::vector<std::pair<CollectiveOp, double>> expected{
      {sr, kBlock}, {sr, kBlock}, {sr, kBlock},                                            // forward
      {sr, kBlock}, {sr, kBlock + grad}, {sr, kBlock + grad}, {sr, grad}, {sr, grad}};     // backward
  CHECK(exchanges(g, 0, 0) == expected);
  CHECK(exchanges(g, 0, 1) == expected);
  // Every ring step is one call of all 8 ranks at once, each to its CP neighbour: rank = tp_i +
  // 2 cp_i (TP fastest, then CP), so rank t + 2c sends to t + 2 ((c + 1) mod 4).
  std::set<std::pair<std::int32_t, std::int32_t>> want, seen;
  for (std::int32_t t = 0; t < 2; ++t) {
    for (std::int32_t c = 0; c < 4; ++c) want.insert({t + 2 * c, t + 2 * ((c + 1) % 4)});
  }
  for (const auto& task : g.tasks) {
    if (task.category != Category::CpComm) continue;
    const GroupSet& gs = g.groups_of(g.collectives[task.index]);
    REQUIRE(gs.group_size == 2);
    CHECK(gs.group(0)[0] == 0);  // the simulated rank's own pair first
    CHECK(gs.group(0)[1] == 2);
    for (std::size_t k = 0; k < gs.count(); ++k) seen.insert({gs.group(k)[0], gs.group(k)[1]});
  }
  CHECK(seen == want);
}

TEST_CASE("context parallelism: the all-gather alternative gathers K/V over the CP group and reduce-scatters dK/dV") {
  SoftwareSpec s = plain_software();
  s.cp_attention = CpAttention::AllGather;
  const StepGraph g = build_step(cp_model(), training(1024, 1, 1), cp_plan(2, 4, 1), s);
  // The gathered K and V of the whole sequence: cp x one block = 262,144 bytes (nccl-tests' size).
  const std::vector<std::pair<CollectiveOp, double>> expected{{CollectiveOp::AllGather, 4 * kBlock},
                                                              {CollectiveOp::AllGather, 4 * kBlock},
                                                              {CollectiveOp::ReduceScatter, 4 * kBlock}};
  CHECK(exchanges(g, 0, 0) == expected);
  for (const auto& task : g.tasks) {
    if (task.category != Category::CpComm) continue;
    const GroupSet& gs = g.groups_of(g.collectives[task.index]);
    CHECK(std::vector<std::int32_t>(gs.group(0).begin(), gs.group(0).end()) == std::vector<std::int32_t>{0, 2, 4, 6});
    CHECK(gs.count() == 2);  // the CP groups of TP ranks 0 and 1
  }
}

TEST_CASE("context parallelism: every task works on s / cp tokens and gradients reduce over dp x cp") {
  // tp 2, cp 4, dp 2 = 16 ranks; global batch 2 = one micro-batch per replica. The DP group of
  // rank 0 spans the 8 ranks of TP rank 0 (rank = t + 2 (c + 4 d)): 0, 2, ..., 14.
  const StepGraph g = build_step(cp_model(), training(1024, 2, 1), cp_plan(2, 4, 2), plain_software());
  int buckets = 0;
  for (const auto& t : g.tasks) {
    if (t.category != Category::DpComm) continue;
    const GroupSet& gs = g.groups_of(g.collectives[t.index]);
    CHECK(std::vector<std::int32_t>(gs.group(0).begin(), gs.group(0).end()) ==
          std::vector<std::int32_t>{0, 2, 4, 6, 8, 10, 12, 14});
    ++buckets;
  }
  CHECK(buckets > 0);
  // The QKV GEMM of the forward: m = the rank's 1024 / 4 = 256 tokens.
  bool found = false;
  for (const auto& w : g.works) {
    for (const auto& k : w.kernels) {
      if (std::string(k.name) != "qkv") continue;
      CHECK(k.m == 256);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("context parallelism: activations divide by cp, ZeRO shards over dp x cp, K/V blocks in flight counted") {
  const ModelSpec m = cp_model();
  const TrainingSpec t = training(1024, 8, 1);
  // cp 4 x dp 2 against cp 1 x dp 8: the same 8 ranks hold each parameter (ZeRO-1 over both).
  const StageMemory with_cp = estimate_memory(m, t, cp_plan(2, 4, 2, 1), plain_software()).stages.at(0);
  const StageMemory without = estimate_memory(m, t, cp_plan(2, 1, 8, 1), plain_software()).stages.at(0);
  // Flash attention keeps nothing of size s^2: every activation term is linear in the tokens.
  CHECK(with_cp.activations == without.activations / 4);
  CHECK(with_cp.embedding_logits == without.embedding_logits / 4);
  CHECK(with_cp.optimizer == without.optimizer);
  CHECK(with_cp.weights == without.weights);
  // Workspace: linear in the tokens, plus the ring's K/V in flight (memory.hpp): two K/V blocks,
  // 2 x 2 e T kv_r = 2 x 2 x 2 x 256 x 64 = 131,072 bytes, and two fp32 dK/dV blocks,
  // 2 x 2 x 4 T kv_r = 262,144 bytes: 393,216.
  CHECK(with_cp.workspace == without.workspace / 4 + 393216);
}

TEST_CASE("context parallelism: plans it cannot split are errors naming /parallelism/cp") {
  const ModelSpec m = cp_model();
  // Load balancing cuts the sequence into 2 cp chunks: 1004 is not a multiple of 8.
  CHECK_THAT(message(m, training(1004, 1, 1), cp_plan(1, 4, 1)),
             Catch::StartsWith("/parallelism/cp: 2 x cp = 8 does not divide seq_len (1004)"));
  CHECK_THAT(message(m, training(1024, 1, 1), cp_plan(1, 0, 1)), Catch::StartsWith("/parallelism/cp: must be >= 1"));
  // Under sequence parallelism each rank's s / cp tokens split over tp: 1028 = 4 x 257 splits into
  // 2 cp = 4 chunks, but 1028 / 2 = 514 is no multiple of tp 4.
  ParallelismSpec sp = cp_plan(4, 2, 1);
  sp.sequence_parallel = true;
  CHECK_THAT(message(llama(2, 256, 4, 4, 512, 1024), training(1028, 1, 1), sp),
             Catch::StartsWith("/parallelism/cp: tp (4) does not divide the rank's seq_len / cp = 1028 / 2"));
  // The ranks: tp x cp x pp x dp = 2 x 4 x 1 x 1 = 8 on a 16-rank cluster.
  CHECK_THAT(message(m, training(1024, 1, 1), cp_plan(2, 4, 1), 16),
             Catch::StartsWith("/parallelism: tp x cp x pp x dp = 2 x 4 x 1 x 1 = 8 does not match the cluster's 16 ranks"));
  CHECK(message(m, training(1024, 1, 1), cp_plan(2, 4, 1), 8) == "no error");
}
