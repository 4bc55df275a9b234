#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hand_graph.hpp"
#include "test_models.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/build_step.hpp"
#include "trnsim/workload/step_graph_order.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;
using test::GraphBuilder;

namespace {

std::vector<TaskId> cycle_of(const StepGraph& g) {
  try {
    check_acyclic(g);
  } catch (const CycleError& e) {
    return e.tasks();
  }
  return {};
}

// The invariant of a dependency order: every task once, each after its dependencies, and the
// successors of a collective member after every member of its call (they wait for the call).
void check_order(const StepGraph& g, const std::vector<TaskId>& order) {
  REQUIRE(order.size() == g.tasks.size());
  std::vector<std::size_t> position(g.tasks.size(), g.tasks.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    REQUIRE(order[i] < g.tasks.size());
    REQUIRE(position[order[i]] == g.tasks.size());  // not seen before
    position[order[i]] = i;
  }
  std::vector<std::vector<TaskId>> members(g.calls);
  for (TaskId t = 0; t < g.tasks.size(); ++t) {
    if (g.tasks[t].kind == TaskKind::Collective) members[g.tasks[t].call].push_back(t);
  }
  std::size_t violations = 0;
  for (TaskId t = 0; t < g.tasks.size(); ++t) {
    const Task& task = g.tasks[t];
    for (std::uint32_t e = task.succ_begin; e < task.succ_end; ++e) {
      const TaskId s = g.successors[e];
      if (position[t] >= position[s]) ++violations;
      if (task.kind != TaskKind::Collective) continue;
      for (const TaskId m : members[task.call]) {
        if (position[m] >= position[s]) ++violations;
      }
    }
  }
  CHECK(violations == 0);
}

}  // namespace

TEST_CASE("step graph order: a cycle of three tasks is reported with exactly their ids") {
  GraphBuilder b;
  const TaskId free = b.compute(0, 0);
  const TaskId a = b.compute(0, 0), c = b.compute(1, 0), d = b.compute(0, 0);
  const TaskId after = b.compute(0, 0);
  b.edge(free, after);
  b.edge(a, c);
  b.edge(c, d);
  b.edge(d, a);
  b.edge(d, after);
  const StepGraph g = b.finish({0, 1}, 1, 0);
  // a -> c -> d -> a, listed from the lowest id in dependency order (c waits for a, d for c).
  CHECK(cycle_of(g) == std::vector<TaskId>{a, c, d});
  try {
    check_acyclic(g);
    FAIL("no cycle reported");
  } catch (const CycleError& e) {
    CHECK_THAT(e.what(), Catch::Contains("1 (rank 0) -> 2 (rank 1) -> 3 (rank 0)"));
  }
}

TEST_CASE("step graph order: members of one collective call waiting for each other are a cycle") {
  // The edges alone are acyclic (m1 -> x -> m0), but the call starts only when m0 has arrived,
  // m0 waits for x and x for the call to end: the replay would deadlock.
  GraphBuilder b;
  const TaskId m0 = b.collective(0, 0), x = b.compute(1, 0), m1 = b.collective(1, 0);
  b.edge(m1, x);
  b.edge(x, m0);
  const StepGraph g = b.finish({0, 1}, 1, 1);
  // m0 arrives at the call, whose end (through m1) x waits for; m0 waits for x.
  CHECK(cycle_of(g) == std::vector<TaskId>{m0, m1, x});
}

TEST_CASE("step graph order: a chain is ordered whatever its ids") {
  GraphBuilder b;
  const TaskId last = b.compute(0, 0), first = b.compute(0, 0), middle = b.compute(0, 0);
  b.edge(first, middle);
  b.edge(middle, last);
  const StepGraph g = b.finish({0}, 1, 0);
  CHECK(check_acyclic(g) == std::vector<TaskId>{first, middle, last});  // the only order there is
}

TEST_CASE("step graph order: built steps are ordered, every dependency before its dependent") {
  const ModelSpec m = gpt(8, 256, 4, 1000);  // tied embeddings: a call shared by two stages
  const TrainingSpec t = training(256, 16, 1);
  struct Case {
    std::int64_t tp, pp, dp;
    PipelineSchedule sched;
    std::int64_t v;
  };
  const std::vector<Case> cases{
      {1, 1, 1, PipelineSchedule::OneFOneB, 1},
      {2, 2, 2, PipelineSchedule::OneFOneB, 1},
      {2, 4, 1, PipelineSchedule::GPipe, 1},
      {1, 4, 2, PipelineSchedule::Interleaved, 2},
  };
  for (const auto& c : cases) {
    for (bool symmetric : {true, false}) {
      BuildOptions o;
      o.symmetric = symmetric;
      const StepGraph g =
          build_step(m, t, parallelism(c.tp, c.pp, c.dp, true, Recompute::Selective, c.sched, c.v, 1), trnsim::workload::SoftwareSpec{}, o);
      INFO("tp " << c.tp << " pp " << c.pp << " dp " << c.dp << " v " << c.v << " symmetric " << symmetric);
      check_order(g, check_acyclic(g));
    }
  }
}

TEST_CASE("rank_slot: the dense table, a stale one and none give each rank its index in simulated_ranks", "[workload]") {
  StepGraph g;
  g.simulated_ranks = {0, 5, 64, 4095};  // one rank per stage of a 4-stage layout, say
  const auto expect_slots = [&] {
    // The slot is the rank's position in the ascending list, by definition.
    CHECK(g.rank_slot(0) == 0);
    CHECK(g.rank_slot(5) == 1);
    CHECK(g.rank_slot(64) == 2);
    CHECK(g.rank_slot(4095) == 3);
    CHECK_THROWS_AS(g.rank_slot(6), InternalError);
    CHECK_THROWS_AS(g.rank_slot(-1), InternalError);
    CHECK_THROWS_AS(g.rank_slot(4096), InternalError);
  };
  expect_slots();  // no table: the search
  g.index_ranks();
  CHECK(g.slot_by_rank.size() == 4096);  // up to the largest simulated rank
  expect_slots();
  // The list changes after indexing: the table's slot no longer holds the rank, so it is ignored.
  g.simulated_ranks = {5, 64, 4095};
  CHECK(g.rank_slot(5) == 0);
  CHECK(g.rank_slot(4095) == 2);
  CHECK_THROWS_AS(g.rank_slot(0), InternalError);
  // Ranks too sparse for a table (4 ranks, the largest past 16 x 4 + 65,536): no table, the search.
  g.simulated_ranks = {0, 1, 2, 1 << 20};
  g.index_ranks();
  CHECK(g.slot_by_rank.empty());
  CHECK(g.rank_slot(1 << 20) == 3);
  // The same ranks in a job of 2^20 + 1 ranks (a layout spreading its simulated ranks over the
  // job): a table of every rank up to the last simulated one.
  g.total_ranks = (1 << 20) + 1;
  g.index_ranks();
  CHECK(g.slot_by_rank.size() == (1u << 20) + 1);
  CHECK(g.rank_slot(1 << 20) == 3);
  CHECK(g.rank_slot(2) == 2);
  // Past 2^22 real ranks, the job does not widen the table.
  g.simulated_ranks = {0, 1 << 23};
  g.total_ranks = (1 << 23) + 1;
  g.index_ranks();
  CHECK(g.slot_by_rank.empty());
  CHECK(g.rank_slot(1 << 23) == 1);
}
