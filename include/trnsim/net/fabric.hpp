#pragma once
// Fabric: a cluster's topology and the routes found on it so far. A Network builds its own, or
// shares one that plans on the same cluster reuse (a sweep keeps one per worker thread), so that
// a plan does not rebuild the topology nor search again the routes the previous plan found.
// Routes depend only on the topology, so a shared fabric changes no figure. The analytic model also
// keeps here what it derives from routes alone: each group's schedule terms (GroupTerms), so that
// the plans of a sweep whose groups are the same ranks do not route and share them again. Not
// thread-safe: the caches grow as routes are asked for; one thread at a time.
#include <memory>

#include "trnsim/hw/specs.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct GroupTerms;  // net-internal (src/net/group_set_pricing.hpp)

struct Fabric {
  // Contract: builds the topology of `cluster` (O(chips + links)); throws InputError as Topology does.
  explicit Fabric(const hw::ClusterSpec& cluster);
  ~Fabric();
  Fabric(const Fabric&) = delete;  // the router points at the topology
  Fabric& operator=(const Fabric&) = delete;

  Topology topology;
  Router router;
  std::unique_ptr<GroupTerms> group_terms;  // the analytic model's group schedules on this fabric
};

}  // namespace trnsim::net
