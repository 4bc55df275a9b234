#pragma once
// NetCommunicator: the replay executor's communication through net::Network. A StepGraph
// collective with several groups (symmetric replicas) runs on every group at the same moment and
// completes when the last group does; the same for replica transfers. Where the network model
// allows (Network::collapses_replicas: analytic), that is one network call on the whole group set,
// whatever the number of groups; otherwise, or with `collapse_replicas` off, one network call per
// group, joined. Both give the same completion times, to the picosecond.
#include <cstdint>
#include <vector>

#include "trnsim/net/network.hpp"
#include "trnsim/replay/communicator.hpp"
#include "trnsim/sim/countdown.hpp"
#include "trnsim/sim/slot_pool.hpp"

namespace trnsim::replay {

class NetCommunicator final : public Communicator {
 public:
  // Contract: `algorithm` goes with every collective (Auto: the network's collective policy
  // chooses; Optimal: the analytic optimum; else forced). `collapse_replicas` off: one network
  // call per group even where the model could start the set as one (a reference path for tests).
  NetCommunicator(net::Network& network, net::Algorithm algorithm = net::Algorithm::Auto,
                  bool collapse_replicas = true);

  void bind(const workload::StepGraph& graph) override;
  void start_collective(const workload::Collective& c, sim::InlineHandler done) override;
  void start_transfer(std::int32_t src, std::int32_t dst, double bytes, std::uint32_t replica_set,
                      sim::InlineHandler done) override;
  double expected_seconds(const workload::Collective& c) override;
  bool set_aside(bool on) override { return network_.set_aside(on); }

 private:
  // A call waiting for its network operations.
  struct Join {
    sim::Countdown parts;
    sim::InlineHandler done;
  };
  std::uint32_t open_join(std::uint32_t parts, sim::InlineHandler done);
  void part_done(std::uint32_t slot);

  // The network's id of the bound graph's group set `set` / of replica set `set` with its
  // simulated pair (src, dst) first; registered on first use.
  net::ReplicaSetId network_group_set(std::uint32_t set);
  net::ReplicaSetId network_pair_set(std::uint32_t set, std::int32_t src, std::int32_t dst);
  const workload::StepGraph& graph() const;

  net::Network& network_;
  net::Algorithm algorithm_;
  bool collapse_;
  const workload::StepGraph* graph_ = nullptr;
  std::vector<net::ReplicaSetId> group_ids_;  // per bound group set, kUnregistered until used
  struct PairSetId {
    net::ReplicaSetId id;
    RankPair simulated;  // the pair it was registered with, first in the network's set
  };
  std::vector<PairSetId> pair_ids_;  // per bound replica set
  sim::SlotPool<Join, 6> joins_;
  net::Collective scratch_;  // reused: its rank vector keeps its capacity between calls
};

}  // namespace trnsim::replay
