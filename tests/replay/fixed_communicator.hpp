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
  void start_transfer(std::int32_t, std::int32_t, double, std::uint32_t, sim::InlineHandler done) override {
    ++transfers_started;
    engine_.schedule_in(transfer_, std::move(done));
  }
  std::size_t collectives_started = 0;
  std::size_t transfers_started = 0;

 private:
  sim::Engine& engine_;
  sim::Time collective_, transfer_;
};

// A FixedCommunicator whose collectives and transfers all take `t`, and which announces that time
// as the collectives' expected duration (the executor's HBM sharing needs it).
class ExpectingCommunicator final : public replay::Communicator {
 public:
  ExpectingCommunicator(sim::Engine& engine, sim::Time t) : engine_(engine), t_(t) {}
  void start_collective(const workload::Collective&, sim::InlineHandler done) override {
    engine_.schedule_in(t_, std::move(done));
  }
  void start_transfer(std::int32_t, std::int32_t, double, std::uint32_t, sim::InlineHandler done) override {
    engine_.schedule_in(t_, std::move(done));
  }
  double expected_seconds(const workload::Collective&) override { return t_.to_seconds(); }

 private:
  sim::Engine& engine_;
  sim::Time t_;
};

}  // namespace trnsim::test
