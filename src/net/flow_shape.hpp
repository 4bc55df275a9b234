#pragma once
// Net-internal: FlowShape, a call alone on the flow model, measured once per distinct call (the
// flow-model contract in flow_model.hpp says how the flow model uses it).
#include <cstddef>
#include <limits>
#include <vector>

#include "network_model.hpp"
#include "trnsim/net/analytic_cache.hpp"
#include "trnsim/net/flow_solver.hpp"

namespace trnsim::net {

struct FlowShape {
  sim::Time time;   // T: the full schedule alone on the network, every step a flow
  sim::Time fixed;  // F = T - (time of the coarse pairs alone): launch, message, step and latency terms
  double bytes = 0;  // what the schedule sends (reductions' reads of their operands not included)
  std::vector<LinkId> links;                    // ascending
  std::vector<double> link_bytes, link_busy_s;  // per links[i], alone
  struct Pair {
    int src_rank = 0, dst_rank = 0;  // its flows cross Router::path(src_rank, dst_rank)
    double bytes = 0;
    bool reduce = false;  // the reads of a receiver's operands on its DMA link (src_rank == dst_rank)
    // The pair's rate cap: one DMA stream per receiving rank it stands for (+infinity: none).
    double max_rate = std::numeric_limits<double>::infinity();
  };
  // The coarse form: one per (sender, receiver chip) and one per rank that reduces, in schedule
  // order (a sender's transfers to one chip share their path: its DMA link and the route).
  std::vector<Pair> pairs;
};

// Measures and keeps the shapes, each on a solver of its own that is empty between measurements.
class FlowShapes {
 public:
  explicit FlowShapes(NetworkContext& context);

  // Contract: the shape of `c` (Auto resolved by the closed form). First call per distinct call:
  // one isolated flow simulation of its schedule, then of its coarse pairs; later calls one lookup.
  // The reference stays valid for the shapes' lifetime.
  const FlowShape& collective(const Collective& c);
  // Contract: the shape of a point-to-point transfer: T = NetworkContext::transfer_time (so that
  // it agrees with the analytic model to the picosecond), its coarse form one flow on the route.
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
