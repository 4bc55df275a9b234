#pragma once
// The network facade the replay executor uses: a cluster's topology and routes, one network model
// (analytic or flow), driven by a sim::Engine. In flow mode every transfer of every collective and
// every point-to-point transfer in flight shares the same FlowSolver, so they contend.
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

class Network final : private CollectiveListener, private FlowListener {
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
  Algorithm choose(const Collective& c) { return analytic_.choose(c); }
  Schedule schedule(const Collective& c);

  NetworkModel model() const { return model_; }
  const Topology& topology() const { return topo_; }
  Router& router() { return router_; }
  const FlowSolver& solver() const { return solver_; }
  // Per link with traffic, in link order.
  std::vector<LinkUsage> link_usage() const;
  std::size_t in_flight() const { return in_flight_; }

 private:
  struct Pending {
    std::unique_ptr<CollectiveRun> run;
    sim::InlineHandler done;
    bool used = false;
  };
  std::uint32_t acquire(sim::InlineHandler done);
  void finish(std::uint32_t slot);  // from an engine event: frees the slot, runs its handler
  void on_collective_done(std::uint64_t id, sim::Time now) override;
  void on_flow_done(std::uint64_t tag, sim::Time now) override;
  AnalyticResult analytic_result(const Schedule& s);  // time and per-link bytes, for the cache
  void wake();
  void on_wake();

  NetworkModel model_;
  sim::Engine* engine_;
  Topology topo_;
  Router router_;
  AnalyticModel analytic_;
  AnalyticCache analytic_cache_;  // analytic mode: one schedule per distinct collective
  FlowSolver solver_;
  std::vector<Pending> pending_;
  std::vector<std::uint32_t> free_;
  std::vector<double> analytic_bytes_;
  std::size_t in_flight_ = 0;
  sim::EventId wake_id_;
  sim::Time wake_at_ = sim::Time::max();
  bool dispatching_ = false;
};

}  // namespace trnsim::net
