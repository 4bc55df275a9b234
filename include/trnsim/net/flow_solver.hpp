#pragma once
// The flow model's core, independent of the event engine: flows on routes share every link
// max-min fairly (progressive filling). Rates are recomputed on each flow start and finish for the
// flows connected to the change through shared links (the set whose max-min rates can change),
// no others. It keeps its own calendar of flow starts and completions; whoever drives it (the
// flow model, on the sim::Engine; or a test loop) calls advance_to(next_event()).
// A flow's bytes are delivered exactly: on completion every link of its route is credited with
// the flow's full size.
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "trnsim/net/topology.hpp"
#include "trnsim/sim/slot_pool.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::net {

class FlowListener {
 public:
  // Called once, at the simulated time `now`, when the flow tagged `tag` has delivered its bytes.
  virtual void on_flow_done(std::uint64_t tag, sim::Time now) = 0;

 protected:
  ~FlowListener() = default;
};

struct LinkStats {
  double bytes = 0;            // bytes of the flows that crossed it (credited on completion)
  sim::Time busy;              // time with at least one flow on it (closed intervals)
  std::uint64_t flows = 0;     // flows that crossed it
};

class FlowSolver {
 public:
  static constexpr int kMaxHops = 16;

  explicit FlowSolver(const Topology& topology);

  // Contract: a flow of `bytes` starts at `start` (>= now()) on `route` and `listener` hears of it
  // when it is delivered. Its rate never exceeds `max_rate` bytes/s (+infinity: only the links
  // limit it), as if it crossed a private link of that capacity. Empty route or zero bytes:
  // delivered at `start`. O(log pending) now; the rate work happens when it starts. Never calls
  // back synchronously.
  void submit(sim::Time start, std::span<const LinkId> route, double bytes, FlowListener* listener, std::uint64_t tag,
              double max_rate = std::numeric_limits<double>::infinity());

  sim::Time now() const { return now_; }
  sim::Time next_event();  // sim::Time::max() when nothing is pending
  // Processes every start and completion at times <= t, in (time, submission) order; listeners
  // may submit more. Leaves now() == t.
  void advance_to(sim::Time t);
  void run();  // advance until nothing is pending (tests and stand-alone use)

  std::size_t active_flows() const { return active_; }
  std::uint64_t flows_completed() const { return completed_; }
  std::uint64_t events_processed() const { return events_; }
  double bytes_delivered() const { return delivered_; }
  // Per link; busy time of a link still busy counts up to the last change on it.
  const std::vector<LinkStats>& link_stats() const { return stats_; }

 private:
  enum class EventKind : std::uint8_t { Start, Finish };
  struct Event {
    sim::Time at;
    std::uint64_t seq;
    std::uint32_t flow;
    std::uint32_t version;
    EventKind kind;
  };
  struct Flow {
    std::array<LinkId, kMaxHops> links{};
    std::array<std::int32_t, kMaxHops> pos{};  // index in each link's flow list
    int hops = 0;
    double bytes = 0, remaining = 0, rate = 0, new_rate = 0;
    double max_rate = 0;  // its private cap (submit)
    sim::Time last;
    std::uint32_t version = 0;
    std::uint32_t mark = 0, frozen = 0;
    FlowListener* listener = nullptr;
    std::uint64_t tag = 0;
  };
  struct LinkState {
    double capacity = 0;
    std::vector<std::uint32_t> flows;
    std::uint32_t mark = 0;
    double rem = 0;
    int unfrozen = 0;
    sim::Time busy_since;
  };

  void push(sim::Time at, std::uint32_t flow, std::uint32_t version, EventKind kind);
  void start(std::uint32_t f);
  void finish(std::uint32_t f);
  // Recomputes max-min rates for the flows connected to `seeds` and reschedules those that changed.
  // start() and finish() only change the link lists and add their links to seeds_.
  void rebalance(std::span<const LinkId> seeds);

  const Topology* topo_;
  std::vector<LinkState> links_;
  std::vector<LinkStats> stats_;
  sim::SlotPool<Flow> flows_;  // submitted and not yet finished; a flow's id is its slot
  std::vector<Event> calendar_;  // binary min-heap on (at, seq)
  std::uint64_t seq_ = 0;
  sim::Time now_;
  std::uint32_t epoch_ = 0;
  std::size_t active_ = 0;
  std::uint64_t completed_ = 0, events_ = 0;
  double delivered_ = 0;
  // Scratch, reused: no allocation per event once warm.
  std::vector<LinkId> stack_, comp_links_, seeds_;
  std::vector<std::pair<FlowListener*, std::uint64_t>> notify_;
  std::vector<std::uint32_t> comp_flows_;
  std::vector<std::pair<double, LinkId>> fill_;
  std::vector<std::pair<double, std::uint32_t>> caps_;  // (max_rate, flow) of capped flows, ascending
};

}  // namespace trnsim::net
