#pragma once
// The network facade the replay executor uses: a cluster's topology and routes, one network model
// (analytic or flow), driven by a sim::Engine. In flow mode every collective and point-to-point
// transfer in flight shares the same links, so they contend.
//
// Flow-mode contract (what is simulated, and at what grain):
//  - Each distinct call (op, algorithm, bytes, ranks) has a FlowShape, computed once: its duration
//    alone on the network T (a one-time flow simulation of its full schedule, every step a flow),
//    the links it uses with the bytes and busy time each gets, and its coarse form: one flow per
//    (sender chip, receiver chip) pair carrying all the bytes that pair exchanges, plus a fixed
//    delay F = T - (time of those coarse flows alone): start-up, per-step and latency terms.
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
//    together); link_usage() credits fast-path links with the isolated bytes and busy time,
//    pro rata for the part before a conversion.
//  - Deterministic: links and pairs are visited in ascending / schedule order, ties by event order.
#include <cstdint>
#include <memory>
#include <vector>

#include "trnsim/net/analytic_cache.hpp"
#include "trnsim/net/analytic_model.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/net/collective_run.hpp"
#include "trnsim/net/flow_solver.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/net/topology.hpp"
#include "trnsim/sim/engine.hpp"
#include "trnsim/sim/inline_handler.hpp"

namespace trnsim::net {

enum class NetworkModel : std::uint8_t { Analytic, Flow };

struct LinkUsage {
  LinkId id = 0;
  LinkKind kind = LinkKind::ChipLocal;
  std::string src, dst;
  double bandwidth = 0;  // bytes/s
  double bytes = 0;      // carried so far
  double busy_s = 0;     // flow: time with a flow on it; analytic: bytes / bandwidth
};

class Network final : private FlowListener {
 public:
  // Contract: builds the topology (O(chips + links)); the engine must outlive the network.
  Network(const hw::ClusterSpec& cluster, NetworkModel model, sim::Engine& engine);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Begins `c` at engine.now() and runs `done` once, from an engine event, when it completes.
  // Analytic: after estimate(c). Flow: when its last transfer is delivered. Throws InputError for
  // a bad group or an algorithm that cannot run it.
  void start(const Collective& c, sim::InlineHandler done);
  // Point-to-point (pipeline send/recv): `bytes` from src_rank to dst_rank, paying the collective
  // start-up, one step cost and the route latency, like a one-step send-recv collective.
  void start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler done);

  // Closed-form time of `c` alone on the network (the analytic model, whatever this network's model).
  sim::Time estimate(const Collective& c) { return analytic_.estimate(c); }
  // The same, memoized per distinct (op, algorithm, bytes, ranks): for callers that ask often.
  sim::Time expected(const Collective& c);
  Algorithm choose(const Collective& c) { return analytic_.choose(c); }
  Schedule schedule(const Collective& c);

  NetworkModel model() const { return model_; }
  const Topology& topology() const { return topo_; }
  Router& router() { return router_; }
  const FlowSolver& solver() const { return solver_; }
  // Flow mode: the solver that computes FlowShapes (each distinct call once, alone).
  const FlowSolver& isolated_solver() const { return isolated_; }
  // Per link with traffic, in link order.
  std::vector<LinkUsage> link_usage() const;
  std::size_t in_flight() const { return in_flight_; }
  // Flow mode: bytes delivered so far, fast-path calls included (solver().bytes_delivered() only
  // counts the flows it carried).
  double bytes_delivered() const { return solver_.bytes_delivered() + fast_delivered_; }
  struct FlowCounters {
    std::uint64_t fast = 0;       // calls and transfers completed on the fast path
    std::uint64_t converted = 0;  // fast-path calls turned into flows by a later arrival
    std::uint64_t coarse = 0;     // calls and transfers started in their coarse form
    std::size_t shapes = 0;       // distinct FlowShapes computed
  };
  FlowCounters flow_counters() const;

  // A call alone on the flow model (see the contract above).
  struct FlowShape {
    sim::Time time;   // T
    sim::Time fixed;  // F
    double bytes = 0;
    std::vector<LinkId> links;  // ascending
    std::vector<double> link_bytes, link_busy_s;  // per links[i]
    struct Pair {
      int src_chip = 0, dst_chip = 0;
      double bytes = 0;
    };
    std::vector<Pair> pairs;  // schedule order of first appearance
  };

 private:
  enum class Mode : std::uint8_t { Fast, Coarse };
  struct Pending {
    sim::InlineHandler done;
    bool used = false;
    Mode mode = Mode::Fast;
    const FlowShape* shape = nullptr;
    sim::Time started;
    sim::EventId fast_end;
    std::size_t flows_left = 0;
  };
  std::uint32_t acquire(sim::InlineHandler done);
  void finish(std::uint32_t slot);  // from an engine event: frees the slot, runs its handler
  void on_flow_done(std::uint64_t tag, sim::Time now) override;
  AnalyticResult analytic_result(const Schedule& s);  // time and per-link bytes, for the cache
  void wake();
  void on_wake();
  // Flow mode (src/net/flow_shape.cpp).
  const FlowShape& collective_shape(const Collective& c);
  const FlowShape& transfer_shape(int src_rank, int dst_rank, double bytes);
  void begin(std::uint32_t slot, const FlowShape& shape);
  void convert(std::uint32_t slot);
  // Coarse form: r x each pair's bytes as flows starting after `pre`.
  void start_coarse(std::uint32_t slot, sim::Time pre, double fraction);
  void fast_done(std::uint32_t slot);
  void credit_fast(const FlowShape& shape, double fraction);

  NetworkModel model_;
  sim::Engine* engine_;
  Topology topo_;
  Router router_;
  AnalyticModel analytic_;
  AnalyticCache analytic_cache_;  // analytic mode: one schedule per distinct collective
  FlowSolver solver_;
  FlowSolver isolated_;  // computes FlowShapes: one call alone, then empty again
  CollectiveCache<FlowShape> collective_shapes_, transfer_shapes_;
  CollectiveCache<sim::Time> expected_;  // expected(): closed-form times already computed
  std::vector<std::int32_t> holder_;  // per link: the fast-path slot holding it, or -1
  std::vector<std::int32_t> claims_;  // per link: coarse calls and transfers using it
  std::vector<double> fast_bytes_, fast_busy_;  // per link, credited by the fast path
  double fast_delivered_ = 0;
  FlowCounters counters_;
  Collective key_scratch_;
  std::vector<Pending> pending_;
  std::vector<std::uint32_t> free_;
  std::vector<double> analytic_bytes_;
  std::size_t in_flight_ = 0;
  sim::EventId wake_id_;
  sim::Time wake_at_ = sim::Time::max();
  bool dispatching_ = false;
};

}  // namespace trnsim::net
