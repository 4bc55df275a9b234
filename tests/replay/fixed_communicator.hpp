#pragma once
// A communicator whose collectives and transfers take fixed times: lets tests check the executor's
// scheduling in closed form, independently of any network model.
#include <cstddef>

#include "trnsim/replay/communicator.hpp"
#include "trnsim/sim/engine.hpp"

namespace trnsim::test {

class FixedCommunicator final : public replay::Communicator {
 public:
  FixedCommunicator(sim::Engine& engine, sim::Time collective, sim::Time transfer)
      : engine_(engine), collective_(collective), transfer_(transfer) {}
  void start_collective(const workload::Collective&, sim::InlineHandler done) override {
    ++collectives_started;
    engine_.schedule_in(collective_, std::move(done));
  }
  void start_transfer(std::int32_t, std::int32_t, double, std::span<const replay::RankPair>,
                      sim::InlineHandler done) override {
    ++transfers_started;
    engine_.schedule_in(transfer_, std::move(done));
  }
  std::size_t collectives_started = 0;
  std::size_t transfers_started = 0;

 private:
  sim::Engine& engine_;
  sim::Time collective_, transfer_;
};

}  // namespace trnsim::test
