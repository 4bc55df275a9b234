#pragma once
// NetCommunicator: the replay executor's communication through net::Network. A StepGraph
// collective with several groups (symmetric replicas) starts one network collective per group at
// the same moment and completes when the last group does; the same for replica transfers.
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
  // chooses; Optimal: the analytic optimum; else forced).
  NetCommunicator(net::Network& network, net::Algorithm algorithm = net::Algorithm::Auto);

  void start_collective(const workload::Collective& c, sim::InlineHandler done) override;
  void start_transfer(std::int32_t src, std::int32_t dst, double bytes, std::span<const RankPair> replicas,
                      sim::InlineHandler done) override;
  double expected_seconds(const workload::Collective& c) override;

 private:
  // A call waiting for its network operations.
  struct Join {
    sim::Countdown parts;
    sim::InlineHandler done;
  };
  std::uint32_t open_join(std::uint32_t parts, sim::InlineHandler done);
  void part_done(std::uint32_t slot);

  net::Network& network_;
  net::Algorithm algorithm_;
  sim::SlotPool<Join, 6> joins_;
  net::Collective scratch_;  // reused: its rank vector keeps its capacity between calls
};

}  // namespace trnsim::replay
