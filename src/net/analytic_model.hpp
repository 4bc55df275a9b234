#pragma once
// Net-internal: the analytic network model. Each call completes after its closed-form time
// (closed_form.hpp), computed once per distinct call; calls do not see each other. Link figures:
// every byte a call's schedule sends is credited to the links of its route, and every byte a
// reduction reads to the receiver's DMA link; busy time is bytes / bandwidth.
#include <vector>

#include "network_model.hpp"
#include "trnsim/net/analytic_cache.hpp"

namespace trnsim::net {

class AnalyticModel final : public NetworkModel {
 public:
  explicit AnalyticModel(NetworkContext& context);

  // Contract: O(1) after the first call of each distinct collective (a cache lookup, the per-link
  // credits, one engine event); the first call costs the closed form and one pass over its schedule.
  void start(const Collective& c, sim::InlineHandler&& done) override;
  // Contract: O(route hops), cached routes.
  void start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler&& done) override;
  LinkTotals link_totals(LinkId l) const override;
  NetworkCounters counters() const override { return {}; }

 private:
  AnalyticResult result(const Schedule& s);  // time and per-link bytes, for the cache

  NetworkContext& context_;
  AnalyticCache cache_;              // one result per distinct collective
  std::vector<double> link_bytes_;  // per link, carried so far
};

}  // namespace trnsim::net
