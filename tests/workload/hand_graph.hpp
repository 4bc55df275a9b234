#pragma once
// StepGraphs built by hand for tests (executor, dependency order): add tasks, then edges, then
// finish() lays out the CSR successors as build_step does.
#include <cstdint>
#include <utility>
#include <vector>

#include "trnsim/workload/step_graph.hpp"

namespace trnsim::test {

struct GraphBuilder {
  workload::StepGraph g;
  std::vector<std::vector<workload::TaskId>> succ;

  workload::TaskId compute(std::int32_t rank, std::uint32_t work) {
    return add({.kind = workload::TaskKind::Compute, .stream = workload::Stream::Compute, .rank = rank, .index = work});
  }
  workload::TaskId collective(std::int32_t rank, std::uint32_t coll, workload::Stream s = workload::Stream::TpComm) {
    return add({.kind = workload::TaskKind::Collective, .stream = s, .rank = rank, .index = coll, .call = coll});
  }
  workload::TaskId transfer(std::int32_t from, std::int32_t to) {
    return add({.kind = workload::TaskKind::Transfer, .stream = workload::Stream::PpComm, .rank = from, .peer = to, .bytes = 1});
  }
  workload::TaskId add(workload::Task t) {
    g.tasks.push_back(t);
    succ.emplace_back();
    return static_cast<workload::TaskId>(g.tasks.size() - 1);
  }
  void edge(workload::TaskId from, workload::TaskId to) {
    succ[from].push_back(to);
    ++g.tasks[to].deps;
  }
  workload::StepGraph finish(std::vector<std::int32_t> ranks, std::size_t works, std::size_t collectives) {
    for (std::size_t t = 0; t < g.tasks.size(); ++t) {
      g.tasks[t].succ_begin = static_cast<std::uint32_t>(g.successors.size());
      g.successors.insert(g.successors.end(), succ[t].begin(), succ[t].end());
      g.tasks[t].succ_end = static_cast<std::uint32_t>(g.successors.size());
    }
    g.simulated_ranks = std::move(ranks);
    g.total_ranks = static_cast<std::int32_t>(g.simulated_ranks.size());
    g.works.resize(works);
    g.collectives.resize(collectives);
    g.calls = static_cast<std::uint32_t>(collectives);
    return std::move(g);
  }
};

}  // namespace trnsim::test
