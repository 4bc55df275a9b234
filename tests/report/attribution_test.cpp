// A collective member that reached its call before the last member is waiting for that member,
// not communicating: the breakdown charges the wait to the bubble and only the call's time on
// the network (Span::active to end) to communication; the critical path carries the call's
// network time and reaches the wait through the last member.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../replay/fixed_communicator.hpp"
#include "../workload/hand_graph.hpp"
#include "report_support.hpp"
#include "trnsim/replay/executor.hpp"
#include "trnsim/report/analysis/breakdown.hpp"
#include "trnsim/report/analysis/critical_path.hpp"

using namespace trnsim;
using report::Part;
using report::PathCategory;
using workload::Category;
using workload::Stream;
using workload::TaskId;
using workload::TaskKind;

namespace {

using test::us;
double part_us(const report::Breakdown& b, Part p) { return b.seconds[static_cast<int>(p)] * 1e6; }
double path_us(const report::CriticalPath& p, PathCategory c) { return p.seconds[static_cast<std::size_t>(c)] * 1e6; }

// A GPT decoder of 8 layers x hidden 1024 (16 heads, ffn 4096) with GPT-2's vocabulary of 50,257
// and tied input/output embeddings, pp = 8 (one layer per stage), dp = 1, tp = 1 on one DGX A100
// (8 GPUs): the first and the last stage all-reduce the embedding gradient after their last
// backward, and the last stage (LM head, 4x a layer's matmuls) computes the most.
nlohmann::json gpt_pp8() {
  return {{"name", "gpt-pp8"},
          {"cluster", {{"instance", "dgx-a100-80gb"}, {"count", 1}}},
          {"model",
           {{"name", "gpt-small"}, {"layers", 8}, {"hidden", 1024}, {"heads", 16}, {"kv_heads", 16},
            {"ffn_hidden", 4096}, {"vocab", 50257}, {"mlp", "gelu"}, {"norm", "layernorm"},
            {"learned_positions", true}, {"max_positions", 1024}, {"tied_embeddings", true}, {"biases", true}}},
          {"training",
           {{"seq_len", 1024}, {"global_batch", 16}, {"micro_batch", 1}, {"dtype", "bf16"}, {"optimizer", "adam"}}},
          {"parallelism",
           {{"tp", 1}, {"pp", 8}, {"dp", 1}, {"sequence_parallel", false}, {"zero", 0}, {"schedule", "1f1b"},
            {"virtual_stages", 1}, {"recompute", "none"}}}};
}

// The tied-embedding all-reduce member of `rank` (the only DP-stream collective when dp = 1).
TaskId tied_member(const workload::StepGraph& g, std::int32_t rank) {
  std::vector<TaskId> found;
  for (TaskId t = 0; t < g.tasks.size(); ++t) {
    const auto& task = g.tasks[t];
    if (task.rank == rank && task.kind == TaskKind::Collective && task.stream == Stream::DpComm) found.push_back(t);
  }
  REQUIRE(found.size() == 1);
  return found.front();
}

}  // namespace

TEST_CASE("attribution: with pp = 8 and dp = 1, exposed DP communication is the tied all-reduce's own time") {
  const auto a = test::analyse_json(gpt_pp8());
  const workload::StepGraph& g = a.run.graph;
  REQUIRE(g.simulated_ranks.size() == 8);

  SECTION("fixed-cost communicator: the expected time is the communicator's") {
    // Every collective takes C = 1 ms on the network, every pipeline transfer 20 us. The only
    // collective is the tied all-reduce (tp = 1, dp = 1), so the last stage's exposed DP
    // communication is exactly C: its optimizer waits for the call, nothing else runs during it.
    // The last stage reaches the call after its last backward and waits there for stage 0, which
    // finishes its own last backward 7 stages of backward later (the 1F1B drain): that wait,
    // longer than C, is bubble.
    const sim::Time c = us(1000);
    sim::Engine engine;
    test::FixedCommunicator comm(engine, c, us(20));
    const replay::Timeline tl = replay::execute(engine, g, a.run.work_seconds, comm);
    const report::Breakdown b = report::step_breakdown(g, tl);
    CHECK(b.rank == 7);  // the LM-head stage
    const TaskId last = tied_member(g, 7);
    const TaskId first = tied_member(g, 0);
    CHECK(tl.spans[last].active == tl.spans[first].start);  // stage 0 arrives last
    const double wait_us = (tl.spans[last].active - tl.spans[last].start).to_seconds() * 1e6;
    CHECK(wait_us > 1000);
    CHECK(part_us(b, Part::ExposedDp) == Approx(1000).margin(1e-6));
    CHECK(part_us(b, Part::Bubble) >= wait_us - 1e-6);
    CHECK(b.total() == Approx(tl.step_time.to_seconds()).epsilon(1e-12));

    // The path ends in the last stage's optimizer after the call; the call contributes C, and the
    // wait reaches the path as stage 0's backward pass through its member, the last to arrive.
    const report::CriticalPath p = report::critical_path(g, tl);
    CHECK(path_us(p, PathCategory::DpComm) == Approx(1000).margin(1e-6));
    CHECK(p.length_s == Approx(tl.step_time.to_seconds()).epsilon(1e-12));
    bool stage0_backward = false;
    for (const auto& s : p.segments) stage0_backward |= s.rank == 0 && s.category == PathCategory::Backward;
    CHECK(stage0_backward);
  }

  SECTION("network model: no exposed DP communication beyond the call's closed-form time") {
    // The tied all-reduce: vocab x hidden bf16 gradients, B = 50,257 x 1,024 x 2 = 102.93 MB,
    // between GPUs 0 and 7 of one DGX over NVSwitch, 300 GB/s per direction. A ring of 2 sends
    // (n-1)/n B twice (reduce-scatter, all-gather) each way: B / 300 GB/s = 0.3431 ms. The
    // preset's start-up (10 us) and hop latencies (1 us) add a few tens of us; 0.1 ms covers any
    // per-step cost. The drain wait (7 stages of backward) is several ms, so charging it as
    // communication would break the bound.
    const double closed_form_s = 50257.0 * 1024 * 2 / 300e9;
    const report::Breakdown& b = a.report.breakdown;
    CHECK(b.rank == 7);
    CHECK(b.seconds[static_cast<int>(Part::ExposedDp)] > 0);
    CHECK(b.seconds[static_cast<int>(Part::ExposedDp)] <= closed_form_s + 1e-4);
    const TaskId last = tied_member(g, 7);
    const auto& span = a.run.timeline.spans[last];
    CHECK((span.active - span.start).to_seconds() > 5 * closed_form_s);
    // The breakdown's DP part is the call's time on the network, to the picosecond.
    CHECK(b.seconds[static_cast<int>(Part::ExposedDp)] == Approx((span.end - span.active).to_seconds()).epsilon(1e-9));
    CHECK(a.report.critical_path.seconds[static_cast<int>(PathCategory::DpComm)] <= closed_form_s + 1e-4);
  }
}

TEST_CASE("attribution: waiting in a DP collective for a slower peer is bubble, not DP communication") {
  // Rank 0 computes 2 us, rank 1 computes 7 us; both then join a DP all-reduce that takes 10 us on
  // the network, and compute 1 us after it. The call runs [7, 17); the step ends at 18.
  // Rank 0: forward 2 + 1 = 3, waiting for rank 1 in [2, 7) = 5 us of bubble, DP comm 10.
  // Rank 1: forward 7 + 1 = 8, DP comm 10, no bubble.
  // Critical path: rank 1's 7 us, the call's 10 us, 1 us after it = 18 us; rank 0's wait is off it.
  test::GraphBuilder b;
  const TaskId c0 = b.compute(0, 0), c1 = b.compute(1, 1);
  const TaskId m0 = b.collective(0, 0, Stream::DpComm), m1 = b.collective(1, 0, Stream::DpComm);
  const TaskId e0 = b.compute(0, 2), e1 = b.compute(1, 2);
  b.edge(c0, m0);
  b.edge(c1, m1);
  b.edge(m0, e0);
  b.edge(m1, e1);
  workload::StepGraph g = b.finish({0, 1}, 3, 1);
  g.tasks[m0].category = g.tasks[m1].category = Category::DpComm;
  g.works[0].name = "fwd0";
  g.works[1].name = "fwd1";
  g.works[2].name = "after";
  sim::Engine engine;
  test::FixedCommunicator comm(engine, us(10), us(0));
  const std::vector<double> seconds{2e-6, 7e-6, 1e-6};
  const replay::Timeline tl = replay::execute(engine, g, seconds, comm);
  REQUIRE(tl.step_time == us(18));

  const report::Breakdown r0 = report::rank_breakdown(g, tl, 0);
  CHECK(part_us(r0, Part::Forward) == Approx(3));
  CHECK(part_us(r0, Part::Bubble) == Approx(5));
  CHECK(part_us(r0, Part::ExposedDp) == Approx(10));
  const report::Breakdown r1 = report::rank_breakdown(g, tl, 1);
  CHECK(part_us(r1, Part::Forward) == Approx(8));
  CHECK(part_us(r1, Part::Bubble) == Approx(0));
  CHECK(part_us(r1, Part::ExposedDp) == Approx(10));

  const report::CriticalPath p = report::critical_path(g, tl);
  CHECK(path_us(p, PathCategory::Forward) == Approx(8));
  CHECK(path_us(p, PathCategory::DpComm) == Approx(10));
  CHECK(path_us(p, PathCategory::Waiting) == Approx(0));
  REQUIRE(p.segments.size() == 3);
  CHECK(p.segments[0].task == c1);
  CHECK(p.segments[0].end == us(7));
  CHECK(p.segments[1].begin == us(7));
  CHECK(p.segments[1].end == us(17));
}
