// Whole steps from build_step through the replay executor, checked against closed forms: a single
// device, the pipeline bubble of each schedule, and the exposed data-parallel all-reduce. A
// FixedCommunicator gives collectives and transfers known times, so only the builder's
// dependencies and the executor's scheduling decide the step time.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../workload/test_models.hpp"
#include "fixed_communicator.hpp"
#include "trnsim/cost/compute_model.hpp"
#include "trnsim/replay/executor.hpp"
#include "trnsim/workload/build_step.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// Kernels outside the transformer layers: embedding, final norm, LM head, loss, optimizer.
const std::set<std::string> kOutsideLayers = {"embedding", "positions_dropout", "embedding_wgrad", "final_norm",
                                              "final_norm_bwd",  "lm_head", "lm_head_dgrad", "lm_head_wgrad",
                                              "loss", "loss_bwd", "grad_norm", "adam"};

// Work durations chosen by the test, not the cost model: `per_kernel` seconds for every kernel
// of a layer, `outside` for the kernels in kOutsideLayers.
std::vector<double> kernel_count_seconds(const StepGraph& g, double per_kernel, double outside) {
  std::vector<double> s;
  for (const auto& w : g.works) {
    double t = 0;
    for (const auto& k : w.kernels) t += kOutsideLayers.count(k.name) ? outside : per_kernel;
    s.push_back(t);
  }
  return s;
}

replay::Timeline replay_step(const StepGraph& g, const std::vector<double>& seconds, double collective_s,
                             double transfer_s) {
  sim::Engine engine;
  test::FixedCommunicator comm(engine, sim::Time::seconds(collective_s), sim::Time::seconds(transfer_s));
  return replay::execute(engine, g, seconds, comm);
}

// Seconds the compute stream of `rank` is busy.
double compute_busy(const StepGraph& g, const replay::Timeline& tl, std::int32_t rank) {
  double busy = 0;
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    const Task& t = g.tasks[i];
    if (t.rank == rank && t.stream == Stream::Compute) busy += (tl.spans[i].end - tl.spans[i].active).to_seconds();
  }
  return busy;
}

double sum_of_compute(const StepGraph& g, const std::vector<double>& seconds) {
  double s = 0;
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::Compute) s += seconds[t.index];
  }
  return s;
}

}  // namespace

TEST_CASE("step replay: one device without parallelism takes the sum of its kernels' closed-form times") {
  hw::Calibration cal;
  cal.matmul_efficiency = 0.5;
  cal.task_overhead_s = 1e-6;
  const cost::ComputeModel cm(tensor_only_chip(), cal, hw::Dtype::Bf16, 1);
  // As in step_cost_test: every matmul dimension a multiple of 128, so a product takes
  // 2 m n k / rate with rate = 2 x 128 x 128 x 1 GHz x 0.5; vector, scalar and HBM are free; one
  // 1 us overhead per kernel. Decoder: causal attention with s = 2 tiles runs 3 of 4 tile passes.
  const ModelSpec m = gpt(3, 256, 2, 1024);
  const StepGraph g = build_step(m, training(256, 4, 2), parallelism(1, 1, 1, false, Recompute::None), plain_software());
  std::vector<double> seconds;
  for (const auto& w : g.works) seconds.push_back(cm.cost(w.kernels).seconds);
  const double rate = 2.0 * 128 * 128 * 1e9 * 0.5;
  const double b = 2, s = 256, h = 256, V = 1024, L = 3, mbs = 2;
  // Kernels: per micro-batch, layers 12 forward (P's transpose included) + 16 backward (dS's
  // transpose) + 1 (the flash kernel rebuilds the probabilities in backward), embedding 2 + 1,
  // head 3 + 4; the optimizer's gradient norm and update (plain_software: gradients accumulate
  // inside the GEMMs, no kernel of their own).
  const double kernels = mbs * (L * (12 + 16 + 1) + 3 + 7) + 2;
  // Matmul FLOPs per micro-batch forward: layer 24 b s h^2 + 0.75 x 4 b s^2 h, head 2 b s h V;
  // backward 2x; the scores (half the attention core forward) once more; the two transposes of
  // [s x s] per head, each as a 2 s^2 x 128 product per head (b heads 2 s^2 128 = 2 b s^2 h =
  // att / 2 before the causal 0.75), together att per layer.
  const double att = 0.75 * 4 * b * s * s * h;
  const double flops = mbs * (3 * (L * (24 * b * s * h * h + att) + 2 * b * s * h * V) + L * att / 2 + L * att);
  const double expected = flops / rate + kernels * 1e-6;
  const auto tl = replay_step(g, seconds, 0, 0);
  // One rank, one chain: the step is exactly its compute, with no gap.
  CHECK(tl.step_time.to_seconds() == Approx(expected).epsilon(1e-9));
  CHECK(compute_busy(g, tl, 0) == Approx(expected).epsilon(1e-9));
}

TEST_CASE("step replay: the pipeline bubble with free communication is (p-1)/(m+p-1), interleaved (p-1)/(vm+p-1)") {
  // Uniform stages: every layer kernel takes 1 us, embedding, head and optimizer take none, and
  // each chunk holds the same number of layers. A GPT layer (no recompute, flash attention) is 12
  // forward (P's transpose included) + 1 rebuilding the probabilities + 16 backward kernels (dS's
  // transpose), so one micro-batch on one chunk of k layers costs 29 k us. With free
  // communication the step is (m + p - 1) such units for GPipe and 1F1B, and (v m + p - 1)
  // units of one chunk for interleaved 1F1B; each stage computes m v units, so its compute
  // stream idles (p - 1)/(m + p - 1), resp. (p - 1)/(v m + p - 1), of the step.
  const double unit = 1e-6;
  struct Case {
    PipelineSchedule schedule;
    std::int64_t p, m, v, layers_per_chunk;
  };
  for (const Case c : {Case{PipelineSchedule::GPipe, 4, 8, 1, 2}, Case{PipelineSchedule::OneFOneB, 4, 8, 1, 2},
                       Case{PipelineSchedule::OneFOneB, 2, 3, 1, 1},
                       Case{PipelineSchedule::Interleaved, 2, 4, 2, 1},
                       Case{PipelineSchedule::Interleaved, 4, 8, 2, 1}}) {
    CAPTURE(static_cast<int>(c.schedule), c.p, c.m, c.v);
    const ModelSpec model = gpt(c.p * c.v * c.layers_per_chunk, 256, 4, 1000);
    const StepGraph g = build_step(model, training(256, c.m, 1),
                                   parallelism(1, c.p, 1, false, Recompute::None, c.schedule, c.v), plain_software());
    const auto seconds = kernel_count_seconds(g, unit, 0);
    const auto tl = replay_step(g, seconds, 0, 0);
    const double chunk_unit = 29 * unit * static_cast<double>(c.layers_per_chunk);
    const double slots = static_cast<double>(c.v * c.m + c.p - 1);
    CHECK(tl.step_time.to_seconds() == Approx(slots * chunk_unit).epsilon(1e-9));
    for (std::int32_t rank : g.simulated_ranks) {
      const double step = tl.step_time.to_seconds();
      const double idle = (step - compute_busy(g, tl, rank)) / step;
      CHECK(idle == Approx(static_cast<double>(c.p - 1) / slots).epsilon(1e-9));
    }
  }
}

TEST_CASE("step replay: DP all-reduce is hidden behind the backward except the last bucket") {
  // One pipeline stage, dp = 2 (one simulated rank), every kernel 1 us: C = the sum of the
  // compute tasks. The optimizer waits for the last gradient bucket, which launches when the
  // backward ends; earlier buckets overlap the rest of the backward.
  const ModelSpec model = gpt(4, 256, 4, 1000);
  TrainingSpec t = training(256, 4, 1);  // 2 micro-batches per replica
  const auto par = parallelism(1, 1, 2, false, Recompute::None);
  const double us = 1e-6;
  SECTION("infinitely fast links: no exposed DP time") {
    const StepGraph g = build_step(model, t, par, plain_software());
    const auto seconds = kernel_count_seconds(g, us, us);
    const auto tl = replay_step(g, seconds, 0, 0);
    CHECK(tl.step_time.to_seconds() == Approx(sum_of_compute(g, seconds)).epsilon(1e-12));
  }
  SECTION("one bucket per gradient, each all-reduce shorter than a kernel: only the last is exposed") {
    // A bucket launches at the end of the compute task completing its gradient; the next launches
    // at least one 1 us kernel later, so a 0.5 us all-reduce never queues. The last one, launched
    // at the end of the backward, delays the optimizer by its whole 0.5 us.
    t.gradient_bucket_bytes = 1;
    const StepGraph g = build_step(model, t, par, plain_software());
    std::size_t buckets = 0;
    for (const auto& task : g.tasks) buckets += task.stream == Stream::DpComm ? 1 : 0;
    REQUIRE(buckets > 2);
    const auto seconds = kernel_count_seconds(g, us, us);
    const auto tl = replay_step(g, seconds, 0.5 * us, 0);
    CHECK(tl.step_time.to_seconds() == Approx(sum_of_compute(g, seconds) + 0.5 * us).epsilon(1e-12));
  }
  SECTION("one bucket of all gradients: its whole all-reduce is exposed") {
    t.gradient_bucket_bytes = 1e30;
    const StepGraph g = build_step(model, t, par, plain_software());
    const auto seconds = kernel_count_seconds(g, us, us);
    const double T = 1e-3;
    const auto tl = replay_step(g, seconds, T, 0);
    CHECK(tl.step_time.to_seconds() == Approx(sum_of_compute(g, seconds) + T).epsilon(1e-12));
  }
  SECTION("all-reduces slower than the backward queue up on the DP stream") {
    // n buckets of T = 1 ms each, longer than the whole backward: they run back to back from the
    // first launch t0, so the optimizer starts at t0 + n T and the exposed time is
    // t0 + n T - (end of the backward).
    t.gradient_bucket_bytes = 1;
    const StepGraph g = build_step(model, t, par, plain_software());
    const auto seconds = kernel_count_seconds(g, us, us);
    const double T = 1e-3;
    const auto tl = replay_step(g, seconds, T, 0);
    double first_launch = 1e30, backward_end = 0, optimizer_start = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < g.tasks.size(); ++i) {
      const Task& task = g.tasks[i];
      if (task.stream == Stream::DpComm) {
        ++n;
        first_launch = std::min(first_launch, tl.spans[i].active.to_seconds());
      }
      if (task.category == Category::Backward) backward_end = std::max(backward_end, tl.spans[i].end.to_seconds());
      if (task.category == Category::Optimizer) optimizer_start = tl.spans[i].start.to_seconds();
    }
    REQUIRE(n > 2);
    CHECK(first_launch < backward_end - 10 * us);  // the first bucket launched well inside the backward
    CHECK(optimizer_start - backward_end == Approx(first_launch + static_cast<double>(n) * T - backward_end));
  }
}

namespace {

// Step times of a symmetric and a full build of one plan, replayed with fixed collective (3 us)
// and transfer (2 us) times; `ranks`: the full build's simulated ranks, as the caller expects.
std::pair<sim::Time, sim::Time> symmetric_and_full(const ModelSpec& m, const TrainingSpec& t,
                                                   const ParallelismSpec& p, std::size_t ranks) {
  BuildOptions full;
  full.symmetric = false;
  const StepGraph sym = build_step(m, t, p, plain_software());
  const StepGraph all = build_step(m, t, p, plain_software(), full);
  REQUIRE(all.simulated_ranks.size() == ranks);
  return {replay_step(sym, kernel_count_seconds(sym, 1e-6, 1e-6), 3e-6, 2e-6).step_time,
          replay_step(all, kernel_count_seconds(all, 1e-6, 1e-6), 3e-6, 2e-6).step_time};
}

}  // namespace

TEST_CASE("step replay: symmetric and full builds of one plan take the same step time") {
  // tp 2, pp 2, dp 2 with ZeRO-1 and tied embeddings (GPT) or untied (Llama): every rank of a
  // stage runs the same tasks, and with fixed collective (3 us) and transfer (2 us) times a full
  // build (8 simulated ranks) must replay exactly as the symmetric one (one rank per stage).
  const ModelSpec m = GENERATE(llama(4, 512, 8, 2, 1408, 1000), gpt(4, 512, 8, 1000));
  const auto p = parallelism(2, 2, 2, true, Recompute::Selective, PipelineSchedule::OneFOneB, 1, 1);
  const auto [a, b] = symmetric_and_full(m, training(256, 16, 2), p, 8);
  CHECK(a > sim::Time::us(100));  // not trivially zero
  CHECK(a == b);
}

TEST_CASE("step replay: symmetric and full builds of a MoE plan with expert parallelism take the same step time") {
  // The same invariant with all-to-alls on EP groups (ep 2 of dp 4) and the experts' gradient
  // buckets on their own data-parallel groups (dp / ep = 2): tp 2, pp 2, ZeRO-1, 16 ranks.
  ModelSpec m = llama(4, 512, 8, 2, 1408, 1000);
  m.experts = 4;
  m.experts_per_token = 2;
  m.expert_ffn_hidden = 512;
  auto p = parallelism(2, 2, 4, true, Recompute::Selective, PipelineSchedule::OneFOneB, 1, 1);
  p.ep = 2;
  const auto [a, b] = symmetric_and_full(m, training(256, 16, 2), p, 16);
  CHECK(a > sim::Time::us(100));
  CHECK(a == b);
}

TEST_CASE("step replay: symmetric and full builds of an FSDP plan take the same step time") {
  // zero 3 with tp 2, pp 2, dp 2: per-layer gathers and reduce-scatters on every DP group.
  const ModelSpec m = GENERATE(llama(4, 512, 8, 2, 1408, 1000), gpt(4, 512, 8, 1000));
  const auto p = parallelism(2, 2, 2, true, Recompute::Selective, PipelineSchedule::OneFOneB, 1, 3);
  const auto [a, b] = symmetric_and_full(m, training(256, 16, 2), p, 8);
  CHECK(a > sim::Time::us(100));
  CHECK(a == b);
}

TEST_CASE("step replay: symmetric and full builds of FSDP and ZeRO-2 with expert parallelism take the same step time") {
  // zero 2 and 3 with ep 2 of dp 4: the experts' gathers and reduce-scatters on their own
  // data-parallel groups (dp / ep = 2), the dense ones on the DP groups; tp 2, pp 2, 16 ranks.
  ModelSpec m = llama(4, 512, 8, 2, 1408, 1000);
  m.experts = 4;
  m.experts_per_token = 2;
  m.expert_ffn_hidden = 512;
  const int zero = GENERATE(2, 3);
  auto p = parallelism(2, 2, 4, true, Recompute::Selective, PipelineSchedule::OneFOneB, 1, zero);
  p.ep = 2;
  const auto [a, b] = symmetric_and_full(m, training(256, 16, 2), p, 16);
  CHECK(a > sim::Time::us(100));
  CHECK(a == b);
}

TEST_CASE("step replay: deeper FSDP prefetch exposes less of a gather that outlasts a layer's forward") {
  // FSDP over dp 2 (tp 1, pp 1), one micro-batch, L = 4 layers. Every collective takes c = 1 ms
  // (FixedCommunicator), every layer kernel 10 us, so a layer's forward w (its kernels' sum,
  // about 0.1 ms) is shorter than a gather; embedding, head and optimizer kernels take 0 s. The
  // forward pass on the rank's DP stream, one collective at a time: the root's gather R at
  // [0, c], then the layers' gathers.
  // k = 0: g0 at [c, 2c]; g_j is issued when layer j-1 ends: layer j starts at (j + 2) c + j w,
  //   the head at (L + 1) c + L w.
  // k = 1: g0, g1 back to back at start; g_{j+1} is issued when layer j-1 ends ((j + 1) c + w),
  //   but the stream is busy until (j + 2) c, since c > w: layer j starts at (j + 2) c, the head
  //   at (L + 1) c + w.
  // k = 2: the same stream-bound times, the head at (L + 1) c + w.
  // Gather time exposed before the head (its start - L w): (L + 1) c, then (L + 1) c - (L - 1) w
  // for k = 1 and 2: more prefetch never exposes more.
  const ModelSpec m = llama(4, 512, 8, 2, 1408, 1000);
  const double c = 1e-3, L = 4;
  auto head_start = [&](std::int64_t k, double& w) {
    SoftwareSpec sw = plain_software();
    sw.fsdp_prefetch_units = k;
    const StepGraph g =
        build_step(m, training(256, 4, 2), parallelism(1, 1, 2, false, Recompute::Selective,
                                                       PipelineSchedule::OneFOneB, 1, 3), sw);
    const auto seconds = kernel_count_seconds(g, 10e-6, 0);
    const replay::Timeline tl = replay_step(g, seconds, c, 0);
    w = 0;
    double start = -1;
    for (std::size_t i = 0; i < g.tasks.size(); ++i) {
      const Task& t = g.tasks[i];
      if (t.kind != TaskKind::Compute || t.category != Category::Forward) continue;
      if (t.layer == 0) w += seconds[t.index];
      bool head = false;
      for (const auto& kr : g.works[t.index].kernels) head |= kr.name == std::string("final_norm");
      if (head && start < 0) start = tl.spans[i].start.to_seconds();
    }
    REQUIRE(start >= 0);
    return start;
  };
  double w = 0;
  const double k0 = head_start(0, w);
  REQUIRE(w < c);
  CHECK(k0 - L * w == Approx((L + 1) * c).epsilon(1e-9));
  const double k1 = head_start(1, w);
  CHECK(k1 - L * w == Approx((L + 1) * c - (L - 1) * w).epsilon(1e-9));
  const double k2 = head_start(2, w);
  CHECK(k2 - L * w == Approx((L + 1) * c - (L - 1) * w).epsilon(1e-9));
  CHECK(k1 < k0);
  CHECK(k2 <= k1);
}
