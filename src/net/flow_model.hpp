#pragma once
// Net-internal: the flow network model.
//
// Flow-model contract (what is simulated, and at what grain):
//  - Each distinct call (op, algorithm, bytes, ranks) has a FlowShape (flow_shape.hpp), computed
//    once: its duration alone on the network T (a one-time flow simulation of its full schedule,
//    every step a flow), the links it uses with the bytes and busy time each gets, and its coarse
//    form: one flow per (sender chip, receiver chip) pair carrying all the bytes that pair
//    exchanges, one per chip whose ranks reduce carrying the operands they read (on its DMA link),
//    plus a fixed delay F = T - (time of those coarse flows alone): launch, message, step and
//    latency terms.
//  - Fast path: a call whose links carry no other call or transfer when it starts holds them and
//    completes after exactly T, as in a full flow simulation of it alone.
//  - Contention: when a call or transfer starts on a link held by a fast-path call, that call is
//    converted at that instant: with e of T elapsed and r = 1 - e/T left, each coarse pair becomes
//    a FlowSolver flow of r x its bytes starting r x F from now, and the call completes with its
//    last flow. A call that starts on links already in use runs in its coarse form from the
//    start (r = 1): flows start after F. Converting at once is thus the same as starting coarse.
//    From then on, max-min sharing on every link is simulated by the solver.
//    If nothing else actually overlaps, either form completes exactly at T (rates equal the
//    isolated coarse rates); under contention the coarse form lets a schedule's phases overlap,
//    which is the grain at which contention is modelled.
//  - A link counts as in use from the moment a coarse call or transfer is started (its delay
//    included) until its last flow is delivered: conservative, it only costs speed, not timing.
//  - Bytes: every call delivers exactly its schedule's bytes (fast path, converted part and flows
//    together; the reductions' reads of their operands load the DMA links but are not delivered
//    bytes); link_totals() credits fast-path links with the isolated bytes and busy time,
//    pro rata for the part before a conversion.
//  - Deterministic: links and pairs are visited in ascending / schedule order, ties by event order.
#include <cstdint>
#include <vector>

#include "flow_shape.hpp"
#include "network_model.hpp"
#include "trnsim/net/flow_solver.hpp"
#include "trnsim/sim/countdown.hpp"
#include "trnsim/sim/slot_pool.hpp"

namespace trnsim::net {

class FlowModel final : public NetworkModel, private FlowListener {
 public:
  explicit FlowModel(NetworkContext& context);

  // Contract: first call of a distinct collective or transfer: its FlowShape. Then O(links of the
  // call) plus, under contention, the solver's work for its flows; no allocation in steady state.
  void start(const Collective& c, sim::InlineHandler&& done) override;
  void start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler&& done) override;
  LinkTotals link_totals(LinkId l) const override;
  NetworkCounters counters() const override;

 private:
  enum class Mode : std::uint8_t { Fast, Coarse };
  // A call or transfer in flight.
  struct Call {
    sim::InlineHandler done;
    Mode mode = Mode::Fast;
    const FlowShape* shape = nullptr;
    sim::Time started;
    sim::EventId fast_end;
    sim::Countdown flows;  // coarse: flows not yet delivered
    double fraction = 1;  // coarse: the part of each pair's bytes its flows carry
  };
  using Slot = sim::SlotPool<Call>::Slot;

  void begin(const FlowShape& shape, sim::InlineHandler&& done);
  void convert(Slot slot);
  // Coarse form: `fraction` of each pair's bytes as flows starting after `pre`.
  void start_coarse(Slot slot, sim::Time pre, double fraction);
  void fast_done(Slot slot);
  void finish(Slot slot);  // from an engine event: frees the slot, runs its handler
  void credit_fast(const FlowShape& shape, double fraction);
  void on_flow_done(std::uint64_t tag, sim::Time now) override;
  void wake();
  void on_wake();

  NetworkContext& context_;
  FlowShapes shapes_;
  FlowSolver solver_;  // the calls that contend, as flows
  sim::SlotPool<Call> calls_;
  std::vector<std::int32_t> holder_;  // per link: the fast-path slot holding it, or -1
  std::vector<std::int32_t> claims_;  // per link: coarse calls and transfers using it
  std::vector<double> fast_bytes_, fast_busy_;  // per link, credited by the fast path
  double fast_delivered_ = 0;
  double coarse_delivered_ = 0;  // bytes sent by coarse flows (a reduction's read is not sent)
  NetworkCounters counters_;  // fast, converted, coarse
  sim::EventId wake_id_;      // the engine event that advances the solver to its next event
  sim::Time wake_at_ = sim::Time::max();
  bool dispatching_ = false;  // inside solver_.advance_to(): wake() waits until it returns
};

}  // namespace trnsim::net
