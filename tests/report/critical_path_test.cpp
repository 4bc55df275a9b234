#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "report_support.hpp"
#include "trnsim/report/analysis/critical_path.hpp"

using namespace trnsim;
using report::PathCategory;
using workload::Category;
using workload::Stream;
using workload::TaskKind;

namespace {

using test::us;
double at(const report::CriticalPath& p, PathCategory c) { return p.seconds[static_cast<std::size_t>(c)] * 1e6; }

// Fills the CSR successor lists of `g` from (from, to) edges and counts dependencies.
void wire(workload::StepGraph& g, const std::vector<std::pair<workload::TaskId, workload::TaskId>>& edges) {
  for (workload::TaskId t = 0; t < g.tasks.size(); ++t) {
    g.tasks[t].succ_begin = static_cast<std::uint32_t>(g.successors.size());
    for (const auto& [from, to] : edges) {
      if (from == t) g.successors.push_back(to);
    }
    g.tasks[t].succ_end = static_cast<std::uint32_t>(g.successors.size());
  }
  for (const auto& e : edges) ++g.tasks[e.second].deps;
}

// The segments follow each other without gap or overlap from 0 to the step time.
void check_tiles(const report::CriticalPath& p, sim::Time step) {
  REQUIRE_FALSE(p.segments.empty());
  CHECK(p.segments.front().begin == sim::Time::zero());
  CHECK(p.segments.back().end == step);
  for (std::size_t i = 1; i < p.segments.size(); ++i) CHECK(p.segments[i - 1].end == p.segments[i].begin);
  double sum = 0;
  for (const double s : p.seconds) sum += s;
  CHECK(sum == Approx(step.to_seconds()).epsilon(1e-12));
  CHECK(p.length_s == Approx(step.to_seconds()).epsilon(1e-12));
}

}  // namespace

TEST_CASE("critical path: walks through the last member of a collective and the dependencies") {
  // Two ranks, hand-made timeline (us):
  //   t0 rank 0 forward [0, 4)          t1 rank 1 forward [0, 6)
  //   t2 rank 0 TP all-reduce: arrives 4, runs [6, 9)   t3 rank 1 member: arrives 6, runs [6, 9)
  //   t4 rank 0 backward [9, 12)        t5 rank 1 backward [9, 10)
  //   t6 rank 1 DP all-reduce [10, 13): the last task to end, step time 13.
  // Walking back: t6 [10,13) <- t5 [9,10) <- the call [6,9), entered through t3, whose last
  // member to arrive is t3 itself (at 6) <- t1 [0,6). Rank 0's t0/t2 wait is off the path.
  // So: forward 6, TP 3, backward 1, DP 3 = 13, all on rank 1.
  workload::StepGraph g;
  g.simulated_ranks = {0, 1};
  g.tasks = {
      {.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Forward, .rank = 0},
      {.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Forward, .rank = 1, .stage = 1},
      {.kind = TaskKind::Collective, .stream = Stream::TpComm, .category = Category::TpComm, .rank = 0, .call = 0},
      {.kind = TaskKind::Collective, .stream = Stream::TpComm, .category = Category::TpComm, .rank = 1, .stage = 1,
       .call = 0},
      {.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Backward, .rank = 0},
      {.kind = TaskKind::Compute, .stream = Stream::Compute, .category = Category::Backward, .rank = 1, .stage = 1},
      {.kind = TaskKind::Collective, .stream = Stream::DpComm, .category = Category::DpComm, .rank = 1, .stage = 1,
       .index = 1, .call = 1},
  };
  wire(g, {{0, 2}, {1, 3}, {2, 4}, {3, 5}, {5, 6}});
  g.calls = 2;
  g.works.resize(2);
  g.works[0].name = "fwd";
  g.works[1].name = "bwd";
  g.tasks[4].index = g.tasks[5].index = 1;
  g.collectives.resize(2);  // all-reduce by default
  replay::Timeline tl;
  tl.spans = {{us(0), us(0), us(4)},   {us(0), us(0), us(6)},  {us(4), us(6), us(9)},  {us(6), us(6), us(9)},
              {us(9), us(9), us(12)},  {us(9), us(9), us(10)}, {us(10), us(10), us(13)}};
  tl.step_time = us(13);

  const auto p = report::critical_path(g, tl);
  check_tiles(p, tl.step_time);
  REQUIRE(p.segments.size() == 4);
  CHECK(p.segments[0].task == 1);
  CHECK(p.segments[1].task == 3);
  CHECK(p.segments[2].task == 5);
  CHECK(p.segments[3].task == 6);
  CHECK(at(p, PathCategory::Forward) == Approx(6));
  CHECK(at(p, PathCategory::TpComm) == Approx(3));
  CHECK(at(p, PathCategory::Backward) == Approx(1));
  CHECK(at(p, PathCategory::DpComm) == Approx(3));
  CHECK(at(p, PathCategory::Waiting) == Approx(0));
  REQUIRE(p.by_rank.size() == 1);
  CHECK(p.by_rank[0].rank == 1);
  CHECK(p.by_rank[0].stage == 1);
  // Top contributors: "fwd" 6 us first; "dp_comm all-reduce" and "tp_comm all-reduce" 3 us each
  // (name order on ties), "bwd" 1 us last.
  REQUIRE(p.top.size() == 4);
  CHECK(p.top[0].name == "fwd");
  CHECK(p.top[1].name == "dp_comm all-reduce");
  CHECK(p.top[2].name == "tp_comm all-reduce");
  CHECK(p.top[3].name == "bwd");
}

TEST_CASE("critical path: the previous task on the stream, and an unexplained start as waiting") {
  // One rank, no dependencies (us): A computes [1, 3), B [3, 7) after A on the same stream.
  // B's start is set by A (its stream predecessor); A started at 1 with nothing before it, so
  // [0, 1) is waiting. Path: waiting 1 + forward 2 + forward 4 = 7.
  workload::StepGraph g;
  g.simulated_ranks = {0};
  g.tasks = {{.kind = TaskKind::Compute}, {.kind = TaskKind::Compute, .index = 0}};
  wire(g, {});
  g.works.resize(1);
  g.works[0].name = "w";
  replay::Timeline tl;
  tl.spans = {{us(1), us(1), us(3)}, {us(3), us(3), us(7)}};
  tl.step_time = us(7);
  const auto p = report::critical_path(g, tl);
  check_tiles(p, tl.step_time);
  REQUIRE(p.segments.size() == 3);
  CHECK(p.segments[0].task == -1);
  CHECK(p.segments[0].category == PathCategory::Waiting);
  CHECK(at(p, PathCategory::Waiting) == Approx(1));
  CHECK(at(p, PathCategory::Forward) == Approx(6));
}

namespace {

// An example shrunk to one layer per model chunk, 1024-token sequences, pp micro-batches per
// pipeline and `dp` replicas on `instances` instances: it keeps its hardware, TP, PP, schedule
// and rank order, and runs in a fraction of a second.
void check_example(const std::string& file, int pp, int v, int dp, int instances, const std::string& network) {
  INFO(file << " " << network);
  const auto a = test::analyse_file(
      "configs/examples/" + file,
      {"model.layers=" + std::to_string(pp * v), "training.seq_len=1024",
       "training.global_batch=" + std::to_string(dp * pp), "parallelism.dp=" + std::to_string(dp),
       "cluster.count=" + std::to_string(instances), "network.model=" + network});
  check_tiles(a.report.critical_path, a.run.timeline.step_time);
  CHECK(a.report.critical_path.length_s == Approx(a.report.step_time_s).epsilon(1e-12));
}

}  // namespace

TEST_CASE("critical path: its length is the step time on a small GPT-3 175B on DGX A100") {
  check_example("gpt3-175b-a100.json", 8, 2, 2, 16, "analytic");  // 8 x 8 x 2 GPUs on 16 nodes
  check_example("gpt3-175b-a100.json", 8, 2, 2, 16, "flow");
}

TEST_CASE("critical path: its length is the step time on a small Llama 2 70B on trn1") {
  check_example("llama2-70b-trn1.json", 8, 1, 2, 16, "analytic");  // 32 x 8 x 2 cores on 16 instances
}

TEST_CASE("critical path: its length is the step time on a small Llama 3.1 405B on trn2u") {
  check_example("llama3.1-405b-trn2u.json", 16, 1, 2, 8, "analytic");  // 16 x 16 x 2 cores on 8 instances
}

TEST_CASE("critical path: its length is the step time on small Llama 3.1 8B and tiny examples") {
  check_example("llama3.1-8b-trn2.json", 1, 1, 8, 1, "analytic");
  check_example("llama3.1-8b-trn2.json", 1, 1, 8, 1, "flow");
  check_example("tiny-trn1.json", 1, 1, 1, 1, "analytic");
  check_example("tiny-trn1.json", 1, 1, 1, 1, "flow");
}
