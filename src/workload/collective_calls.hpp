#pragma once
// Collective bookkeeping for build_step: shared Collective descriptions (op, bytes, group set),
// each distinct group set stored once, and call ids that match the k-th call of every member of
// a group.
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "trnsim/workload/plan.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

// Which group a collective runs on.
enum class GroupKind : int {
  Tp,    // the rank's tensor-parallel group
  Dp,    // its data-parallel group
  Tied,  // the pair (first stage, last stage) that shares tied embeddings
  Ep,        // its expert-parallel group (RankLayout::ep_group)
  ExpertDp,  // the data-parallel group of its routed experts (RankLayout::expert_dp_group)
  Cp,        // its context-parallel group (RankLayout::cp_group)
  CpRing,    // the pair (rank, its CP ring neighbour) its ring attention sends to
};
inline constexpr std::size_t kGroupKinds = static_cast<std::size_t>(GroupKind::CpRing) + 1;  // CpRing is the last

class CollectiveCalls {
 public:
  CollectiveCalls(const RankLayout& layout, bool symmetric, StepGraph& graph);
  // Index of the Collective entry for this op and size on the group of `kind` of rank `c`
  // (symmetric builds: groups[0] is that group, the others its replicas on the same stage).
  std::uint32_t collective(GroupKind kind, const RankLayout::Coord& c, CollectiveOp op, double bytes);
  // Call id of the `occurrence`-th call a rank makes on its group of `kind`; increments it.
  std::uint32_t call(GroupKind kind, const RankLayout::Coord& c, std::uint32_t& occurrence) {
    return call_in(instance_calls(kind, c), occurrence);
  }
  // The call ids made so far on the group of `kind` of rank `c`, for call_in: a rank that calls
  // its group often finds it once (the index arithmetic per call was 2 % of a sweep's plan of
  // llama3.1-405b-trn2u). Valid as long as this object.
  std::vector<std::uint32_t>& instance_calls(GroupKind kind, const RankLayout::Coord& c) {
    return calls_[group_instance(kind, c)];
  }
  // Call id of the `occurrence`-th call on a group's `calls` (instance_calls); increments it.
  std::uint32_t call_in(std::vector<std::uint32_t>& calls, std::uint32_t& occurrence) {
    if (occurrence == calls.size()) calls.push_back(graph_.calls++);
    return calls[occurrence++];
  }

 private:
  std::size_t group_instance(GroupKind kind, const RankLayout::Coord& c) const;
  GroupSet groups(GroupKind kind, const RankLayout::Coord& c) const;

  const RankLayout& layout_;
  bool symmetric_;
  StepGraph& graph_;
  std::vector<std::vector<std::uint32_t>> calls_;  // per group instance, call ids in order
  std::map<std::tuple<int, std::int64_t, int, double>, std::uint32_t> index_;
  std::map<std::pair<int, std::int64_t>, std::uint32_t> sets_;  // (kind, replica set) -> group set
};

}  // namespace trnsim::workload
