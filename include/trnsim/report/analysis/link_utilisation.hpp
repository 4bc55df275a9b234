#pragma once
// How busy the network's links were over the step. A link's busy fraction is its busy time over
// the step time: in the flow model the time a flow was on it, in the analytic model bytes over
// bandwidth (net::LinkUsage::busy_s). Only links that carried traffic are counted.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trnsim/net/network.hpp"
#include "trnsim/replay/step_simulation.hpp"

namespace trnsim::report {

struct LinkLoad {
  net::LinkId id = 0;
  net::LinkKind kind = net::LinkKind::Dma;
  std::string src, dst;
  double bandwidth = 0;      // bytes/s, this direction
  double bytes = 0;          // carried during the step
  double busy_s = 0;
  double busy_fraction = 0;  // busy_s / step time
};

// The links of one kind that carried traffic, together.
struct LinkKindLoad {
  net::LinkKind kind = net::LinkKind::Dma;
  std::int64_t links = 0;         // links of this kind that carried traffic
  double bytes = 0;               // summed over them
  double mean_busy_fraction = 0;  // over those links
  double max_busy_fraction = 0;
};

struct LinkUtilisation {
  std::vector<LinkKindLoad> kinds;  // in net::LinkKind order, kinds with traffic only
  std::vector<LinkLoad> top;        // busiest links: busy fraction descending, link id on ties
};

// Contract: O(links x top_n) at worst; `topology` (the links' own) names the top links and gives their
// bandwidths: InternalError when it is null and a link is to be named (top_n > 0 and a link
// carried traffic). step_time_s <= 0 gives
// fractions of 0.
LinkUtilisation link_utilisation(std::span<const net::LinkUsage> links, const net::Topology* topology,
                                 double step_time_s, std::size_t top_n = 10);

// The topology a replay's links lie on (its fabric's); null for a run without one.
inline const net::Topology* links_topology(const replay::StepRun& run) {
  return run.fabric ? &run.fabric->topology : nullptr;
}

}  // namespace trnsim::report
