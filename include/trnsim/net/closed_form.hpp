#pragma once
// ClosedForm: the closed-form (alpha-beta) time of a schedule. Both network models use it to choose
// an algorithm; the analytic model's times and Network::expected() are its answers. A step of a
// schedule costs, for its slowest transfer,
//   collective_step_s + route latency + bytes / (min over its links of bandwidth / load)
// where a link's load is the number of the step's own transfers crossing it (the group's flows
// sharing a link evenly, as max-min does when they are alike). A schedule costs
// collective_startup_s plus the sum of its steps. No contention with other collectives.
#include <vector>

#include "trnsim/net/collective.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::net {

class ClosedForm {
 public:
  explicit ClosedForm(Router& router);

  // Contract: O(sum over phases of transfers x hops); routes are cached in the router.
  sim::Time estimate(const Schedule& s);
  // Resolves Auto with choose(), builds the schedule and estimates it.
  sim::Time estimate(const Collective& c);
  // The automatic choice: among the concrete algorithms that support the collective, the one
  // with the smallest estimate (ties: the earlier in kConcreteAlgorithms). The direct mesh is a
  // candidate for all-reduce, reduce-scatter and all-gather only up to kMeshMaxRanks ranks.
  // A forced (non-Auto) algorithm is returned as is.
  Algorithm choose(const Collective& c);
  static constexpr std::size_t kMeshMaxRanks = 64;

  sim::Time step_time(const Phase& p);

 private:
  Router* router_;
  const Topology* topo_;
  std::vector<int> load_;  // per link, zero between calls
  std::vector<LinkId> touched_;
};

}  // namespace trnsim::net
