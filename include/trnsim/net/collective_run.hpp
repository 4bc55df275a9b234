#pragma once
// Runs one schedule on the flow model with the closed form's per-step physics (closed_form.hpp):
// once both of its ranks have finished their earlier steps, a transfer's flow starts on its route
// after the sender's messages of the step (collective_message_s each), at most at one DMA stream's
// rate (collective_stream_bandwidth); in a reducing step a second
// flow of the same bytes, the receiver's read of its local operand, runs on the receiver's DMA
// link from the same moment. The transfer completes the route's latency after its flows are
// delivered, or after collective_step_s from their start if that is later (the step's
// synchronisation).
// Engine-independent: it only talks to a FlowSolver.
#include <cstdint>
#include <vector>

#include "trnsim/net/collective.hpp"
#include "trnsim/net/flow_solver.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/sim/countdown.hpp"

namespace trnsim::net {

class CollectiveRun final : public FlowListener {
 public:
  // Contract: builds the per-rank step index, O(transfers + ranks). Nothing starts until start().
  CollectiveRun(Schedule schedule, Router& router, FlowSolver& solver);
  CollectiveRun(const CollectiveRun&) = delete;
  CollectiveRun& operator=(const CollectiveRun&) = delete;

  // Begins at `t0` (>= solver.now()): every rank is ready after collective_launch_s. `listener`
  // hears `id` when the last transfer is complete (or at t0 + launch for an empty schedule), as it
  // hears a flow's end: to whoever waits on it, a run is one more flow.
  void start(sim::Time t0, FlowListener* listener, std::uint64_t id);

  const Schedule& schedule() const { return schedule_; }
  double bytes_sent() const { return sent_; }
  double bytes_received() const { return received_; }
  bool done() const { return ranks_left_.done(); }

  void on_flow_done(std::uint64_t tag, sim::Time now) override;

 private:
  static constexpr std::uint64_t kTimerTag = ~std::uint64_t{0};
  // A flow's tag: phase << 34 | part << 32 | transfer index.
  enum class Part : std::uint64_t { Data = 0, Reduce = 1, StepEnd = 2 };
  static std::uint64_t tag(std::size_t phase, Part part, std::size_t transfer) {
    return (static_cast<std::uint64_t>(phase) << 34) | (static_cast<std::uint64_t>(part) << 32) | transfer;
  }
  int local(int rank) const;
  void arrive(int r, int phase, int rep, sim::Time at);  // r reaches (phase, rep) at `at`
  void leave(int r, sim::Time at);                       // r finished its current step
  void complete(std::size_t p, std::size_t i, sim::Time at);  // transfer i of phase p is done

  Schedule schedule_;
  Router* router_;
  FlowSolver* solver_;
  double step_s_ = 0, message_s_ = 0, launch_s_ = 0;
  double stream_rate_ = 0;  // a transfer's cap: one DMA stream (Calibration::stream_rate)
  std::vector<int> ranks_;  // sorted global ranks of the group
  // Per phase, CSR: the transfers each local rank takes part in (as sender or receiver).
  std::vector<std::vector<std::int32_t>> offsets_, items_;
  std::vector<std::vector<std::int32_t>> src_, dst_;  // per phase, per transfer: local ranks
  std::vector<std::vector<std::int32_t>> sends_;      // per phase, per local rank: transfers it sends
  // Per phase, per transfer, for the step in progress: flows not yet delivered, and when they began.
  std::vector<std::vector<sim::Countdown>> parts_;
  std::vector<std::vector<sim::Time>> begin_;
  std::vector<std::vector<sim::Time>> latency_;  // per phase, per transfer: its route's latency
  std::vector<int> phase_, rep_;                    // per local rank
  std::vector<sim::Countdown> outstanding_;         // per local rank: transfers of its step not yet complete
  sim::Countdown ranks_left_;                       // ranks that have not finished every step
  double sent_ = 0, received_ = 0;
  FlowListener* listener_ = nullptr;
  std::uint64_t id_ = 0;
};

}  // namespace trnsim::net
