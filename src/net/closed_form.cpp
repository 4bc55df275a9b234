#include "trnsim/net/closed_form.hpp"

#include <algorithm>

namespace trnsim::net {

ClosedForm::ClosedForm(Router& router)
    : router_(&router), topo_(&router.topology()), load_(static_cast<std::size_t>(router.topology().link_count()), 0) {}

sim::Time ClosedForm::step_time(const Phase& p) {
  const hw::DeviceMap& dm = topo_->devices();
  const auto& cal = topo_->cluster().instance.calibration;
  touched_.clear();
  for (const Transfer& t : p.transfers) {
    for (LinkId l : router_->links(router_->route(dm.chip_of(t.src), dm.chip_of(t.dst)))) {
      if (load_[static_cast<std::size_t>(l)]++ == 0) touched_.push_back(l);
    }
  }
  sim::Time worst = sim::Time::zero();
  for (const Transfer& t : p.transfers) {
    const Route& r = router_->route(dm.chip_of(t.src), dm.chip_of(t.dst));
    double rate = 0;
    bool first = true;
    for (LinkId l : router_->links(r)) {
      // Same expression as the flow model's fair share: capacity / flows on the link.
      const double share = topo_->link(l).bandwidth / load_[static_cast<std::size_t>(l)];
      rate = first ? share : std::min(rate, share);
      first = false;
    }
    const sim::Time dt = sim::Time::seconds(cal.collective_step_s + r.latency) +
                         (t.bytes > 0 ? sim::Time::seconds(t.bytes / rate) : sim::Time::zero());
    worst = std::max(worst, dt);
  }
  for (LinkId l : touched_) load_[static_cast<std::size_t>(l)] = 0;
  return worst;
}

sim::Time ClosedForm::estimate(const Schedule& s) {
  sim::Time total = sim::Time::seconds(topo_->cluster().instance.calibration.collective_startup_s);
  for (const Phase& p : s.phases) {
    const sim::Time step = step_time(p);
    total += sim::Time::ps(step.picoseconds() * p.repeats);
  }
  return total;
}

Algorithm ClosedForm::choose(const Collective& c) {
  if (c.algorithm != Algorithm::Auto) return c.algorithm;
  const auto& cluster = topo_->cluster();
  const auto& dm = topo_->devices();
  const bool reduce_or_gather = c.op == CollectiveOp::AllReduce || c.op == CollectiveOp::ReduceScatter ||
                                c.op == CollectiveOp::AllGather;
  Algorithm best = Algorithm::Direct;
  sim::Time best_time = sim::Time::max();
  for (Algorithm a : kConcreteAlgorithms) {
    if (!supports(a, c, cluster, dm)) continue;
    if (a == Algorithm::Direct && reduce_or_gather && c.ranks.size() > kMeshMaxRanks) continue;
    const sim::Time t = estimate(make_schedule(c, a, cluster, dm));
    if (t < best_time) {
      best_time = t;
      best = a;
    }
  }
  return best;
}

sim::Time ClosedForm::estimate(const Collective& c) {
  return estimate(make_schedule(c, choose(c), topo_->cluster(), topo_->devices()));
}

}  // namespace trnsim::net
