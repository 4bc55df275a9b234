#pragma once
// Runs one schedule on the flow model: each transfer becomes a flow on its route, started after
// the per-step cost (collective_step_s) and the route's latency once both of its ranks have
// finished their earlier steps. Engine-independent: it only talks to a FlowSolver.
#include <cstdint>
#include <vector>

#include "trnsim/net/collective.hpp"
#include "trnsim/net/flow_solver.hpp"
#include "trnsim/net/router.hpp"

namespace trnsim::net {

class CollectiveListener {
 public:
  virtual void on_collective_done(std::uint64_t id, sim::Time now) = 0;

 protected:
  ~CollectiveListener() = default;
};

class CollectiveRun final : public FlowListener {
 public:
  // Contract: builds the per-rank step index, O(transfers + ranks). Nothing starts until start().
  CollectiveRun(Schedule schedule, Router& router, FlowSolver& solver);
  CollectiveRun(const CollectiveRun&) = delete;
  CollectiveRun& operator=(const CollectiveRun&) = delete;

  // Begins at `t0` (>= solver.now()): every rank is ready after collective_startup_s. `listener`
  // hears `id` when the last transfer is delivered (or at t0 + start-up for an empty schedule).
  void start(sim::Time t0, CollectiveListener* listener, std::uint64_t id);

  const Schedule& schedule() const { return schedule_; }
  double bytes_sent() const { return sent_; }
  double bytes_received() const { return received_; }
  bool done() const { return ranks_done_ == static_cast<int>(ranks_.size()); }

  void on_flow_done(std::uint64_t tag, sim::Time now) override;

 private:
  static constexpr std::uint64_t kTimerTag = ~std::uint64_t{0};
  int local(int rank) const;
  void arrive(int r, int phase, int rep, sim::Time at);  // r reaches (phase, rep) at `at`
  void leave(int r, sim::Time at);                       // r finished its current step

  Schedule schedule_;
  Router* router_;
  FlowSolver* solver_;
  const hw::DeviceMap* devices_;
  double step_s_ = 0, startup_s_ = 0;
  std::vector<int> ranks_;  // sorted global ranks of the group
  // Per phase, CSR: the transfers each local rank takes part in (as sender or receiver).
  std::vector<std::vector<std::int32_t>> offsets_, items_;
  std::vector<std::vector<std::int32_t>> src_, dst_;  // per phase, per transfer: local ranks
  std::vector<int> phase_, rep_, outstanding_;       // per local rank
  int ranks_done_ = 0;
  double sent_ = 0, received_ = 0;
  CollectiveListener* listener_ = nullptr;
  std::uint64_t id_ = 0;
};

}  // namespace trnsim::net
