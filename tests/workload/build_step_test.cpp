#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "test_models.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/memory.hpp"
#include "trnsim/workload/plan.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// Kahn's algorithm over the CSR: true when every task can run (no cycle, deps consistent).
bool runs_to_completion(const StepGraph& g) {
  std::vector<std::uint32_t> deps(g.tasks.size());
  std::vector<TaskId> ready;
  for (TaskId i = 0; i < g.tasks.size(); ++i) {
    deps[i] = g.tasks[i].deps;
    if (deps[i] == 0) ready.push_back(i);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const TaskId t = ready.back();
    ready.pop_back();
    ++done;
    for (auto s = g.tasks[t].succ_begin; s < g.tasks[t].succ_end; ++s) {
      if (--deps[g.successors[s]] == 0) ready.push_back(g.successors[s]);
    }
  }
  return done == g.tasks.size();
}

// What a task is, independent of rank numbering: compared between symmetric and full builds.
std::string describe(const StepGraph& g, const Task& t) {
  std::string d = std::to_string(static_cast<int>(t.kind)) + "/" + std::to_string(static_cast<int>(t.stream)) + "/" +
                  std::to_string(static_cast<int>(t.category)) + "/L" + std::to_string(t.layer) + "/mb" +
                  std::to_string(t.micro_batch);
  if (t.kind == TaskKind::Compute) d += "/" + g.works[t.index].name;
  if (t.kind == TaskKind::Collective) {
    d += "/op" + std::to_string(static_cast<int>(g.collectives[t.index].op)) + "/" +
         std::to_string(g.collectives[t.index].bytes);
  }
  if (t.kind == TaskKind::Transfer) d += "/peer-stage/" + std::to_string(t.bytes);
  return d;
}

std::vector<std::string> sequence_of(const StepGraph& g, std::int32_t rank) {
  std::vector<std::string> out;
  for (const auto& t : g.tasks) {
    if (t.rank == rank) out.push_back(describe(g, t));
  }
  return out;
}

std::string build_error(const ModelSpec& m, const TrainingSpec& t, const ParallelismSpec& p) {
  try {
    build_step(m, t, p, trnsim::workload::SoftwareSpec{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("build_step: every schedule and layout gives a graph that runs to completion") {
  const ModelSpec m = gpt(8, 256, 4, 1000);
  const TrainingSpec t = training(256, 16, 1);
  struct Case {
    std::int64_t tp, pp, dp;
    bool sp;
    Recompute rc;
    PipelineSchedule sched;
    std::int64_t v;
    int zero;
  };
  const std::vector<Case> cases{
      {1, 1, 1, false, Recompute::None, PipelineSchedule::OneFOneB, 1, 0},
      {2, 2, 2, true, Recompute::Selective, PipelineSchedule::OneFOneB, 1, 1},
      {2, 4, 1, false, Recompute::Full, PipelineSchedule::GPipe, 1, 0},
      {1, 4, 2, false, Recompute::Selective, PipelineSchedule::Interleaved, 2, 0},
      {2, 2, 2, true, Recompute::Full, PipelineSchedule::Interleaved, 2, 1},
      {1, 1, 2, false, Recompute::None, PipelineSchedule::Interleaved, 2, 0},  // two chunks on one rank
  };
  for (const auto& c : cases) {
    for (bool symmetric : {true, false}) {
      BuildOptions o;
      o.symmetric = symmetric;
      const StepGraph g =
          build_step(m, t, parallelism(c.tp, c.pp, c.dp, c.sp, c.rc, c.sched, c.v, c.zero), trnsim::workload::SoftwareSpec{}, o);
      INFO("tp " << c.tp << " pp " << c.pp << " dp " << c.dp << " v " << c.v << " symmetric " << symmetric);
      CHECK(runs_to_completion(g));
      CHECK(g.simulated_ranks.size() == static_cast<std::size_t>(symmetric ? c.pp : c.tp * c.pp * c.dp));
    }
  }
}

TEST_CASE("build_step: symmetric and full builds give the representative the same task sequence") {
  // Llama (untied) and GPT (tied embeddings: a call shared by the first and last stage).
  const ModelSpec m = GENERATE(llama(4, 512, 8, 2, 1408, 1000), gpt(4, 512, 8, 1000));
  const TrainingSpec t = training(256, 16, 2);
  const auto p = parallelism(2, 2, 2, true, Recompute::Selective, PipelineSchedule::OneFOneB, 1, 1);
  BuildOptions full;
  full.symmetric = false;
  const StepGraph sym = build_step(m, t, p, trnsim::workload::SoftwareSpec{});
  const StepGraph all = build_step(m, t, p, trnsim::workload::SoftwareSpec{}, full);
  const RankLayout layout(2, 2, 2, "tp,dp,pp");
  for (std::int64_t stage = 0; stage < 2; ++stage) {
    const auto rep = layout.rank(0, 0, stage);
    const auto seq = sequence_of(sym, rep);
    CHECK(!seq.empty());
    CHECK(seq == sequence_of(all, rep));
    // Every rank of a full build has the same shape as its stage's representative.
    for (std::int64_t tp = 0; tp < 2; ++tp) {
      for (std::int64_t dp = 0; dp < 2; ++dp) CHECK(sequence_of(all, layout.rank(tp, dp, stage)) == seq);
    }
  }
  // In a full build the members of one collective call are the members of its group.
  std::map<std::uint32_t, std::set<std::int32_t>> members;
  for (const auto& task : all.tasks) {
    if (task.kind == TaskKind::Collective) members[task.call].insert(task.rank);
  }
  for (const auto& task : all.tasks) {
    if (task.kind != TaskKind::Collective) continue;
    const auto& groups = all.groups_of(all.collectives[task.index]);
    REQUIRE(groups.count() == 1);
    const auto group = groups.group(0);
    CHECK(members[task.call] == std::set<std::int32_t>(group.begin(), group.end()));
  }
}

TEST_CASE("build_step: symmetric replicas cover every rank's traffic") {
  const ModelSpec m = gpt(4, 256, 4, 1000);
  const TrainingSpec t = training(256, 16, 1);
  const StepGraph g = build_step(m, t, parallelism(4, 2, 2, true, Recompute::Selective), trnsim::workload::SoftwareSpec{});
  const RankLayout layout(4, 2, 2, "tp,dp,pp");
  for (const auto& task : g.tasks) {
    if (task.kind == TaskKind::Collective) {
      const auto& groups = g.groups_of(g.collectives[task.index]);
      std::set<std::int32_t> ranks, stages;
      for (auto r : groups.ranks) {
        ranks.insert(r);
        stages.insert(static_cast<std::int32_t>(layout.coord(r).pp));
      }
      const auto simulated = groups.group(0);
      CHECK(std::count(simulated.begin(), simulated.end(), task.rank) == 1);
      if (stages.size() == 1) {
        // TP and DP calls: the groups partition the stage's 8 ranks (TP: 2 groups of 4; DP: 4 of 2).
        CHECK(ranks.size() == 8);
        CHECK(*stages.begin() == task.stage);
      } else {
        // The tied-embedding sync pairs each (tp, dp) of the first stage with the last: 8 pairs.
        CHECK(groups.count() == 8);
        CHECK(ranks.size() == 16);
        CHECK(g.collectives[task.index].op == CollectiveOp::AllReduce);
      }
    }
    if (task.kind == TaskKind::Transfer) {
      // 8 (tp, dp) pairs send the same activation: the task and 7 replicas.
      const auto replicas = g.replicas(task.index);
      CHECK(replicas.size() == 7);
      CHECK(layout.coord(task.peer).pp != task.stage);
      // Each replica is the task's transfer for another (tp, dp): the same two stages.
      for (const auto& [from, to] : replicas) {
        CHECK(layout.coord(from).pp == task.stage);
        CHECK(layout.coord(to).pp == layout.coord(task.peer).pp);
      }
    }
  }
}

TEST_CASE("build_step: pipeline stages exchange one activation and one gradient per micro-batch") {
  const ModelSpec m = gpt(4, 256, 4, 1000);
  const TrainingSpec t = training(256, 8, 1);  // 8 micro-batches per pipeline
  const StepGraph g = build_step(m, t, parallelism(2, 4, 1, true, Recompute::None), trnsim::workload::SoftwareSpec{});
  std::map<std::pair<std::int32_t, std::int32_t>, int> sends;
  for (const auto& task : g.tasks) {
    if (task.kind != TaskKind::Transfer) continue;
    ++sends[{task.stage, RankLayout(2, 1, 4, "tp,dp,pp").coord(task.peer).pp}];
    // Sequence-parallel activation: b s h e / tp = 256 * 256 * 2 / 2 bytes.
    CHECK(task.bytes == Approx(256.0 * 256 * 2 / 2));
  }
  for (int s = 0; s < 3; ++s) {
    CHECK(sends[{s, s + 1}] == 8);  // forward activations
    CHECK(sends[{s + 1, s}] == 8);  // backward gradients
  }
  CHECK(sends.size() == 6);
}

TEST_CASE("build_step: a sequence-parallel layer forward is 5 compute tasks around AG, RS, AG, RS") {
  // [norm1] AG [qkv .. attn_out] RS [residual1, norm2] AG [fc1 .. fc2] RS [residual2]: the last
  // residual is cut from the next layer's norm1 (and from the head's final norm) at the layer boundary.
  const ModelSpec m = gpt(2, 256, 4, 1000);
  const StepGraph g = build_step(m, training(256, 1, 1), parallelism(2, 1, 1, true, Recompute::Selective), trnsim::workload::SoftwareSpec{});
  std::vector<std::string> fwd;
  for (const auto& task : g.tasks) {
    if (task.layer != 1 || task.category == Category::Backward || task.category == Category::Recompute) continue;
    if (task.kind == TaskKind::Compute && task.category != Category::Forward) continue;
    if (task.kind == TaskKind::Collective && fwd.size() >= 9) break;  // the backward's collectives
    fwd.push_back(task.kind == TaskKind::Compute
                      ? "C"
                      : std::to_string(static_cast<int>(g.collectives[task.index].op)));
  }
  const std::string ag = std::to_string(static_cast<int>(CollectiveOp::AllGather));
  const std::string rs = std::to_string(static_cast<int>(CollectiveOp::ReduceScatter));
  CHECK(fwd == std::vector<std::string>{"C", ag, "C", rs, "C", ag, "C", rs, "C"});
}

TEST_CASE("build_step: with TP overlap the input-gradient reduction runs beside the wgrad GEMM") {
  // gpt(2 layers), tp = 2, no SP: the backward reduces the input gradient (all-reduce) after the
  // MLP's fc1 dgrad, the attention's qkv dgrad (per layer) and the LM head's dgrad: 2 x 2 + 1 = 5.
  // Overlapped (Megatron's async TP all-reduce), each hangs off the rank's chain: its predecessor
  // also starts the wgrad, and the segment after the wgrad waits for both.
  const ModelSpec m = gpt(2, 256, 4, 1000);
  SoftwareSpec sw;
  auto count_off_chain = [](const StepGraph& g, bool check_join) {
    int off_chain = 0;
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      const Task& c = g.tasks[i];
      if (c.kind != TaskKind::Collective || c.stream != Stream::TpComm || c.category != Category::TpComm) continue;
      // On the chain a collective's one successor waits for it alone; off the chain, for it and
      // the wgrad segment too.
      REQUIRE(c.succ_end - c.succ_begin == 1);
      const Task& next = g.tasks[g.successors[c.succ_begin]];
      if (next.deps == 2) {
        ++off_chain;
        if (check_join) CHECK(next.kind == TaskKind::Compute);
      }
    }
    return off_chain;
  };
  const StepGraph serial = build_step(m, training(256, 1, 1), parallelism(2, 1, 1, false, Recompute::None), sw);
  CHECK(count_off_chain(serial, false) == 0);
  sw.overlap.tp_comm = true;
  const StepGraph overlapped = build_step(m, training(256, 1, 1), parallelism(2, 1, 1, false, Recompute::None), sw);
  CHECK(runs_to_completion(overlapped));
  CHECK(count_off_chain(overlapped, true) == 5);
  // The same work either way: the overlap moves no FLOPs.
  auto flops = [](const StepGraph& g) {
    double f = 0;
    for (const Task& t : g.tasks) {
      if (t.kind != TaskKind::Compute) continue;
      for (const auto& k : g.works[t.index].kernels) f += k.flops;
    }
    return f;
  };
  CHECK(flops(overlapped) == Approx(flops(serial)).epsilon(1e-12));
}

TEST_CASE("build_step: with TP overlap under SP the input re-gather runs beside the dgrad GEMM, the reduce-scatter beside the wgrad") {
  // gpt(2 layers), tp = 2, SP. Serial, each region's backward gathers the output gradient and the
  // stored input in one call (2 S) and reduce-scatters the input gradient after the wgrad. With
  // TP overlap (Megatron's LinearWithGradAccumulationAndAsyncCommunication) the input's gather is
  // a call of its own, started before the region's first GEMM's dgrad and joined at its wgrad, and
  // the reduce-scatter runs beside that wgrad. Off the chain: 2 per region, 2 regions per layer,
  // 2 layers, and the LM head's reduce-scatter = 9. Backward all-gather calls: serial one per
  // region + the embedding's = 5; overlapped 2 per region + 1 = 9; the same bytes either way.
  const ModelSpec m = gpt(2, 256, 4, 1000);
  SoftwareSpec sw;
  struct Shape {
    int off_chain = 0, wgrad_joins = 0, backward_gathers = 0;
    double gathered = 0;
  };
  auto shape_of = [](const StepGraph& g) {
    Shape s;
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      const Task& c = g.tasks[i];
      if (c.kind != TaskKind::Collective || c.stream != Stream::TpComm || c.category != Category::TpComm) continue;
      const auto& call = g.collectives[c.index];
      const Task& next = g.tasks[g.successors[c.succ_begin]];
      if (call.op == CollectiveOp::AllGather && next.kind == TaskKind::Compute &&
          g.works[next.index].name.rfind("bwd:", 0) == 0) {
        ++s.backward_gathers;
        s.gathered += call.bytes;
      }
      REQUIRE(c.succ_end - c.succ_begin == 1);
      if (next.deps != 2) continue;
      ++s.off_chain;
      const std::string& joined = g.works[next.index].name;
      // The gather's join is the segment that starts with the weight gradient needing it.
      if (call.op == CollectiveOp::AllGather && joined.find("_wgrad..") != std::string::npos) ++s.wgrad_joins;
    }
    return s;
  };
  const auto p = parallelism(2, 1, 1, true, Recompute::None);
  const Shape serial = shape_of(build_step(m, training(256, 1, 1), p, sw));
  sw.overlap.tp_comm = true;
  const StepGraph g = build_step(m, training(256, 1, 1), p, sw);
  CHECK(runs_to_completion(g));
  const Shape overlapped = shape_of(g);
  CHECK(serial.off_chain == 0);
  CHECK(serial.backward_gathers == 5);
  CHECK(overlapped.off_chain == 9);
  CHECK(overlapped.wgrad_joins == 4);
  CHECK(overlapped.backward_gathers == 9);
  CHECK(overlapped.gathered == Approx(serial.gathered).epsilon(1e-12));
}

TEST_CASE("build_step: DP buckets carry every gradient once, and ZeRO-1 reduce-scatters, updates and all-gathers") {
  const ModelSpec m = gpt(4, 512, 8, 1000);
  const TrainingSpec t = training(256, 8, 1);  // bucket 25 MB by default
  auto p = parallelism(1, 1, 4, false, Recompute::Selective);
  const auto params = estimate_memory(m, t, p, trnsim::workload::SoftwareSpec{}).stages[0].parameters;
  auto dp_tasks = [](const StepGraph& g) {
    std::vector<const Task*> out;
    for (const auto& task : g.tasks) {
      if (task.stream == Stream::DpComm) out.push_back(&task);
    }
    return out;
  };
  SECTION("all-reduce buckets sum to the gradients (bf16: 2 bytes per parameter)") {
    TrainingSpec small = t;
    small.gradient_bucket_bytes = 2e6;
    const StepGraph g = build_step(m, small, p, trnsim::workload::SoftwareSpec{});
    double bytes = 0;
    const auto dp = dp_tasks(g);
    for (const Task* task : dp) {
      CHECK(g.collectives[task->index].op == CollectiveOp::AllReduce);
      bytes += g.collectives[task->index].bytes;
    }
    CHECK(bytes == Approx(2 * params));
    // Each layer holds 12 * 512^2 * 2 bytes = 6.3 MB > 2 MB: one bucket per layer. The head's
    // final norm (2 KB) joins the last layer's; the embedding gradient (1.3 MB: 1000 + 256
    // positions rows of 512) completes in its own task after layer 0's backward and, being the
    // last gradient, launches its own bucket.
    CHECK(dp.size() == 5);
    CHECK(runs_to_completion(g));
  }
  SECTION("ZeRO-1") {
    p.zero = 1;
    const StepGraph g = build_step(m, t, p, trnsim::workload::SoftwareSpec{});
    const auto dp = dp_tasks(g);
    double rs = 0, ag = 0;
    TaskId optimizer = 0;
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      if (g.tasks[i].category == Category::Optimizer) optimizer = i;
    }
    for (const Task* task : dp) {
      const auto& c = g.collectives[task->index];
      const auto id = static_cast<TaskId>(task - g.tasks.data());
      if (c.op == CollectiveOp::ReduceScatter) {
        rs += c.bytes;
        CHECK(id < optimizer);
      } else {
        CHECK(c.op == CollectiveOp::AllGather);
        ag += c.bytes;
        CHECK(id > optimizer);
      }
    }
    CHECK(rs == Approx(2 * params));
    CHECK(ag == Approx(2 * params));
    // The optimizer works on a quarter of the parameters, in two passes under the default recipe
    // (fp32 gradient accumulation, fp32 master copy and moments, bf16 weights): the gradient norm
    // reads each accumulated gradient (4 bytes); Adam reads it (4), reads and writes both moments
    // (2 x 2 x 4) and the master copy (2 x 4) and writes the bf16 weight (2): 30 bytes.
    const auto& kernels = g.works[g.tasks[optimizer].index].kernels;
    REQUIRE(kernels.size() == 2);
    CHECK(kernels[0].name == std::string("grad_norm"));
    CHECK(kernels[0].hbm_bytes == Approx(4 * params / 4));
    CHECK(kernels[1].name == std::string("adam"));
    CHECK(kernels[1].hbm_bytes == Approx(30 * params / 4));
  }
}

TEST_CASE("build_step: plans that do not fit are errors naming the field") {
  const ModelSpec m = gpt(6, 256, 4, 1000);
  CHECK_THAT(build_error(m, training(256, 8, 1), parallelism(3, 1, 1, false, Recompute::None)),
             Catch::StartsWith("/parallelism/tp: 3 does not divide heads (4)"));
  // 7 stages for 6 layers: one stage would hold none (4 stages for 6 layers is a valid uneven split).
  CHECK_THAT(build_error(m, training(256, 8, 1), parallelism(1, 7, 1, false, Recompute::None)),
             Catch::StartsWith("/parallelism/pp:") && Catch::Contains("exceed layers (6)"));
  CHECK(build_error(m, training(256, 8, 1), parallelism(1, 4, 1, false, Recompute::None)).empty());
  // 2 stages x 4 chunks = 8 chunks for 6 layers: the stages fit, their virtual stages do not.
  CHECK_THAT(build_error(m, training(256, 8, 1),
                         parallelism(1, 2, 1, false, Recompute::None, PipelineSchedule::Interleaved, 4)),
             Catch::StartsWith("/parallelism/virtual_stages:") && Catch::Contains("8 model chunks exceed layers (6)"));
  // Virtual stages need the interleaved schedule.
  CHECK_THAT(build_error(m, training(256, 8, 1), parallelism(1, 2, 1, false, Recompute::None,
                                                             PipelineSchedule::OneFOneB, 3)),
             Catch::StartsWith("/parallelism/schedule: virtual_stages 3 needs schedule \"1f1b-interleaved\""));
  // Interleaving over v = 2 chunks needs the micro-batches (6 = 6 / 1) to be a multiple of pp (4).
  CHECK_THAT(build_error(gpt(8, 256, 4, 1000), training(256, 6, 1),
                         parallelism(1, 4, 1, false, Recompute::None, PipelineSchedule::Interleaved, 2)),
             Catch::StartsWith("/training/global_batch:") && Catch::Contains("multiple of pp (4)"));
  // tp 4 divides the 4 heads, but not an ffn_hidden of 1002.
  ModelSpec odd_ffn = m;
  odd_ffn.ffn_hidden = 1002;
  CHECK_THAT(build_error(odd_ffn, training(256, 8, 1), parallelism(4, 1, 1, false, Recompute::None)),
             Catch::StartsWith("/parallelism/tp: 4 does not divide ffn_hidden (1002)"));
  // Sequence parallelism shards the sequence: tp 4 does not divide seq_len 254.
  CHECK_THAT(build_error(m, training(254, 8, 1), parallelism(4, 1, 1, true, Recompute::None)),
             Catch::StartsWith("/parallelism/sequence_parallel: tp (4) does not divide seq_len (254)"));
  // dp x micro_batch must divide the global batch.
  CHECK_THAT(build_error(m, training(256, 8, 3), parallelism(1, 1, 1, false, Recompute::None)),
             Catch::StartsWith("/training/global_batch: 8 is not divisible by dp x micro_batch = 1 x 3 = 3"));
  auto p = parallelism(1, 1, 1, false, Recompute::None);
  p.recompute.reset();
  CHECK_THAT(build_error(m, training(256, 8, 1), p), Catch::StartsWith("/parallelism/recompute: not resolved"));
}

TEST_CASE("build_step: a TP group spanning instances is reported") {
  const ModelSpec m = gpt(2, 256, 8, 1000);
  BuildOptions o;
  o.ranks_per_instance = 4;
  o.total_ranks = 16;
  const StepGraph g = build_step(m, training(256, 2, 1), parallelism(8, 1, 2, true, Recompute::None), trnsim::workload::SoftwareSpec{}, o);
  REQUIRE(g.findings.size() == 1);
  CHECK_THAT(g.findings[0], Catch::Contains("span more than one instance"));
}

TEST_CASE("build_step: interleaved chunks hold layers of virtual stages c * pp + p, in schedule order") {
  // 8 layers, pp = 2, v = 2: virtual stage k holds layers 2k, 2k + 1; stage 0 runs chunks 0 and 1
  // = virtual stages 0 and 2 = layers {0, 1, 4, 5}.
  const ModelSpec m = gpt(8, 256, 4, 1000);
  const StepGraph g =
      build_step(m, training(256, 4, 1), parallelism(1, 2, 1, false, Recompute::None, PipelineSchedule::Interleaved, 2), trnsim::workload::SoftwareSpec{});
  std::set<std::int32_t> layers;
  for (const auto& t : g.tasks) {
    if (t.stage != 0 || t.kind != TaskKind::Compute || t.layer < 0) continue;
    layers.insert(t.layer);
  }
  CHECK(layers == std::set<std::int32_t>{0, 1, 4, 5});
}

TEST_CASE("build_step: the first 1F1B stage runs pp forwards before its first backward") {
  const ModelSpec m = gpt(4, 256, 4, 1000);
  const StepGraph g = build_step(m, training(256, 8, 1), parallelism(1, 4, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{});
  std::vector<std::int32_t> forwards_before;  // distinct forward micro-batches before the first backward
  for (const auto& t : g.tasks) {
    if (t.stage != 0 || t.kind != TaskKind::Compute) continue;
    if (t.category == Category::Backward || t.category == Category::Recompute) break;
    if (forwards_before.empty() || forwards_before.back() != t.micro_batch) forwards_before.push_back(t.micro_batch);
  }
  CHECK(forwards_before == std::vector<std::int32_t>{0, 1, 2, 3});
}

TEST_CASE("build_step: K/V heads are replicated when tp exceeds kv_heads") {
  // 16 heads of 64, 2 kv heads, tp = 8: each rank has 2 query heads and 1 (replicated) kv head,
  // so its QKV projection is h x (2 + 2 x 1) x 64.
  const ModelSpec m = llama(2, 1024, 16, 2, 2048, 1024);
  const StepGraph g = build_step(m, training(256, 1, 1), parallelism(8, 1, 1, true, Recompute::None), trnsim::workload::SoftwareSpec{});
  bool seen = false;
  for (const auto& w : g.works) {
    for (const auto& k : w.kernels) {
      if (k.name != "qkv") continue;
      CHECK(k.n == (2 + 2 * 1) * 64);
      CHECK(k.k == 1024);
      seen = true;
    }
  }
  CHECK(seen);
}

TEST_CASE("build_step: an uneven split gives the middle stages the extra layers, each layer built once") {
  // 10 layers on pp = 4: q = 2, r = 2, chunks 1 and 2 (C-1-r <= k < C-1) get 3 layers:
  // stage 0 {0, 1}, stage 1 {2, 3, 4}, stage 2 {5, 6, 7}, stage 3 {8, 9}.
  const ModelSpec m = gpt(10, 256, 4, 1000);
  const StepGraph g = build_step(m, training(256, 4, 1), parallelism(1, 4, 1, false, Recompute::None), trnsim::workload::SoftwareSpec{});
  std::vector<std::set<std::int32_t>> layers(4);
  std::map<std::int32_t, int> forward_tasks_per_layer;  // over the 4 micro-batches
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::Compute || t.layer < 0) continue;
    layers.at(static_cast<std::size_t>(t.stage)).insert(t.layer);
    if (t.category == Category::Forward) ++forward_tasks_per_layer[t.layer];
  }
  CHECK(layers[0] == std::set<std::int32_t>{0, 1});
  CHECK(layers[1] == std::set<std::int32_t>{2, 3, 4});
  CHECK(layers[2] == std::set<std::int32_t>{5, 6, 7});
  CHECK(layers[3] == std::set<std::int32_t>{8, 9});
  // Every layer has the same forward tasks per micro-batch, so equal counts over all 10 layers
  // (with the disjoint stage sets above) mean each layer is built on exactly one stage.
  REQUIRE(forward_tasks_per_layer.size() == 10);
  for (const auto& [layer, n] : forward_tasks_per_layer) CHECK(n == forward_tasks_per_layer.begin()->second);
}

TEST_CASE("build_step: interleaved chunks split unevenly by virtual stage, stages stay balanced") {
  // 6 layers, pp = 2, v = 2: C = 4 chunks, q = 1, r = 2: chunks 1 and 2 hold 2 layers, 0 and 3 one:
  // chunk 0 {0}, 1 {1, 2}, 2 {3, 4}, 3 {5}. Stage 0 runs chunks 0 and 2 = {0, 3, 4}; stage 1
  // chunks 1 and 3 = {1, 2, 5}: 3 layers each.
  const ModelSpec m = gpt(6, 256, 4, 1000);
  const StepGraph g =
      build_step(m, training(256, 4, 1), parallelism(1, 2, 1, false, Recompute::None, PipelineSchedule::Interleaved, 2), trnsim::workload::SoftwareSpec{});
  std::vector<std::set<std::int32_t>> layers(2);
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::Compute && t.layer >= 0) layers.at(static_cast<std::size_t>(t.stage)).insert(t.layer);
  }
  CHECK(layers[0] == std::set<std::int32_t>{0, 3, 4});
  CHECK(layers[1] == std::set<std::int32_t>{1, 2, 5});
  CHECK(runs_to_completion(g));
}
