#pragma once
// What the replay executor needs of a network: start a collective or a point-to-point transfer
// now, and be called back once when it completes. net::Network implements it (replay/net_communicator);
// tests use a free or fixed-cost communicator to check the executor's timing in closed form.
#include <cstdint>

#include "trnsim/sim/inline_handler.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::replay {

using RankPair = workload::RankPair;

class Communicator {
 public:
  virtual ~Communicator() = default;
  // Contract: called by execute() before the first call it starts: the collectives' group sets
  // and the transfers' replica sets that follow are `graph`'s, which outlives those calls.
  virtual void bind(const workload::StepGraph& graph) { (void)graph; }
  // Contract: begins collective `c` (all its groups, replicas included) at the engine's now() and
  // runs `done` exactly once, from an engine event, when the last group has finished.
  virtual void start_collective(const workload::Collective& c, sim::InlineHandler done) = 0;
  // Contract: begins moving `bytes` from src to dst, and the same bytes between every pair of the
  // bound graph's replicas(replica_set), at now(); runs `done` once, from an engine event, when
  // all of them have arrived.
  virtual void start_transfer(std::int32_t src, std::int32_t dst, double bytes, std::uint32_t replica_set,
                              sim::InlineHandler done) = 0;
  // Contract: the calls started from now on until set_aside(false) are set aside (their link
  // traffic can be told from the others', net::Network::set_aside); returns whether the network
  // can. Default: it cannot.
  virtual bool set_aside(bool on) {
    (void)on;
    return false;
  }
  // The time `c` is expected to take alone on the network (closed form), for estimating the rate
  // at which its DMA traffic uses HBM while it runs; 0 = unknown (no HBM sharing is modelled).
  virtual double expected_seconds(const workload::Collective& c) {
    (void)c;
    return 0;
  }
};

}  // namespace trnsim::replay
