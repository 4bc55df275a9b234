#pragma once
// Net-internal: FlowShape, a call alone on the flow model, measured once per distinct call (the
// flow-model contract in flow_model.hpp says how the flow model uses it).
#include <cstddef>
#include <vector>

#include "network_model.hpp"
#include "trnsim/net/analytic_cache.hpp"
#include "trnsim/net/flow_solver.hpp"

namespace trnsim::net {

struct FlowShape {
  sim::Time time;   // T: the full schedule alone on the network, every step a flow
  sim::Time fixed;  // F = T - (time of the coarse pairs alone): start-up, per-step and latency terms
  double bytes = 0;
  std::vector<LinkId> links;                    // ascending
  std::vector<double> link_bytes, link_busy_s;  // per links[i], alone
  struct Pair {
    int src_chip = 0, dst_chip = 0;
    double bytes = 0;
  };
  std::vector<Pair> pairs;  // the coarse form: one per (sender chip, receiver chip), schedule order
};

// Measures and keeps the shapes, each on a solver of its own that is empty between measurements.
class FlowShapes {
 public:
  explicit FlowShapes(NetworkContext& context);

  // Contract: the shape of `c` (Auto resolved by the closed form). First call per distinct call:
  // one isolated flow simulation of its schedule, then of its coarse pairs; later calls one lookup.
  // The reference stays valid for the shapes' lifetime.
  const FlowShape& collective(const Collective& c);
  // Contract: the shape of a point-to-point transfer: one flow on the route after the fixed part
  // (NetworkContext::transfer_fixed), so that it agrees with the analytic model to the picosecond.
  const FlowShape& transfer(int src_rank, int dst_rank, double bytes);
  std::size_t size() const { return collectives_.size() + transfers_.size(); }
  const FlowSolver& solver() const { return isolated_; }  // the measurements' solver

 private:
  NetworkContext& context_;
  FlowSolver isolated_;
  CollectiveCache<FlowShape> collectives_, transfers_;
  Collective key_scratch_;  // transfers' cache key; its rank vector keeps its capacity
};

}  // namespace trnsim::net
