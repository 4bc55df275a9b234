#include "trnsim/replay/net_communicator.hpp"

#include <utility>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::replay {

namespace {
constexpr net::ReplicaSetId kUnregistered = 0xffffffffu;
}  // namespace

NetCommunicator::NetCommunicator(net::Network& network, net::Algorithm algorithm, bool collapse_replicas)
    : network_(network), algorithm_(algorithm), collapse_(collapse_replicas && network.collapses_replicas()) {}

void NetCommunicator::bind(const workload::StepGraph& graph) {
  graph_ = &graph;
  group_ids_.assign(graph.group_sets.size(), kUnregistered);
  pair_ids_.assign(graph.replica_sets.size(), PairSetId{kUnregistered, {}});
}

const workload::StepGraph& NetCommunicator::graph() const {
  if (graph_ == nullptr) throw InternalError("NetCommunicator: a call before bind()");
  return *graph_;
}

std::uint32_t NetCommunicator::open_join(std::uint32_t parts, sim::InlineHandler done) {
  const std::uint32_t slot = joins_.acquire();
  joins_[slot].parts.arm(parts);
  joins_[slot].done = std::move(done);
  return slot;
}

void NetCommunicator::part_done(std::uint32_t slot) {
  Join& join = joins_[slot];
  if (!join.parts.count_down()) return;
  sim::InlineHandler done = std::move(join.done);
  joins_.release(slot);
  done();
}

void NetCommunicator::start_collective(const workload::Collective& c, sim::InlineHandler done) {
  const workload::GroupSet& groups = graph().groups_of(c);
  scratch_.op = c.op;
  scratch_.bytes = c.bytes;
  scratch_.algorithm = algorithm_;
  if (collapse_ && groups.count() > 1) {
    network_.start_group_set(scratch_, network_group_set(c.group_set), std::move(done));
    return;
  }
  if (groups.count() == 1) {
    scratch_.ranks.assign(groups.ranks.begin(), groups.ranks.end());
    network_.start(scratch_, std::move(done));
    return;
  }
  const std::uint32_t slot = open_join(static_cast<std::uint32_t>(groups.count()), std::move(done));
  for (std::size_t g = 0; g < groups.count(); ++g) {
    const auto group = groups.group(g);
    scratch_.ranks.assign(group.begin(), group.end());
    network_.start(scratch_, sim::InlineHandler([this, slot] { part_done(slot); }));
  }
}

double NetCommunicator::expected_seconds(const workload::Collective& c) {
  const workload::GroupSet& groups = graph().groups_of(c);
  if (groups.count() == 0) return 0;
  scratch_.op = c.op;
  scratch_.bytes = c.bytes;
  scratch_.algorithm = algorithm_;
  const auto group = groups.group(0);
  scratch_.ranks.assign(group.begin(), group.end());
  return network_.expected(scratch_).to_seconds();
}

void NetCommunicator::start_transfer(std::int32_t src, std::int32_t dst, double bytes, std::uint32_t replica_set,
                                     sim::InlineHandler done) {
  const auto replicas = graph().replicas(replica_set);
  if (replicas.empty()) {
    network_.start_transfer(src, dst, bytes, std::move(done));
    return;
  }
  if (collapse_) {
    network_.start_pair_set(network_pair_set(replica_set, src, dst), bytes, std::move(done));
    return;
  }
  const std::uint32_t slot = open_join(static_cast<std::uint32_t>(replicas.size() + 1), std::move(done));
  network_.start_transfer(src, dst, bytes, sim::InlineHandler([this, slot] { part_done(slot); }));
  for (const auto& [from, to] : replicas) {
    network_.start_transfer(from, to, bytes, sim::InlineHandler([this, slot] { part_done(slot); }));
  }
}

net::ReplicaSetId NetCommunicator::network_group_set(std::uint32_t set) {
  net::ReplicaSetId& id = group_ids_[set];
  if (id == kUnregistered) {
    const workload::GroupSet& groups = graph().group_sets[set];
    id = network_.add_group_set(groups.ranks, groups.group_size);
  }
  return id;
}

net::ReplicaSetId NetCommunicator::network_pair_set(std::uint32_t set, std::int32_t src, std::int32_t dst) {
  PairSetId& entry = pair_ids_[set];
  if (entry.id == kUnregistered) {
    const auto replicas = graph().replicas(set);
    std::vector<RankPair> pairs;
    pairs.reserve(replicas.size() + 1);
    pairs.emplace_back(src, dst);
    pairs.insert(pairs.end(), replicas.begin(), replicas.end());
    entry = {network_.add_pair_set(pairs), {src, dst}};
  } else if (entry.simulated != RankPair{src, dst}) {
    // The network's set starts with the pair it was registered with: a replica set is shared by
    // the transfers between the same two stages, which the same simulated ranks make.
    throw InternalError(fmt::format("NetCommunicator: replica set {} sent from {} to {}, registered for {} to {}",
                                    set, src, dst, entry.simulated.first, entry.simulated.second));
  }
  return entry.id;
}

}  // namespace trnsim::replay
