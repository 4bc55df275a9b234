#include "trnsim/net/closed_form.hpp"

#include <algorithm>
#include <utility>

namespace trnsim::net {

ClosedForm::ClosedForm(Router& router, CollectivePolicy policy)
    : router_(&router),
      topo_(&router.topology()),
      policy_(std::move(policy)),
      load_(static_cast<std::size_t>(router.topology().link_count()), 0),
      sends_(static_cast<std::size_t>(router.topology().devices().ranks()), 0) {}

sim::Time ClosedForm::step_time(const Phase& p) {
  terms_.clear();
  phase_terms(p, terms_);
  return step_time(p, terms_);
}

void ClosedForm::phase_terms(const Phase& p, std::vector<TransferTerms>& out) {
  const auto& cal = topo_->cluster().instance.calibration;
  touched_.clear();
  auto count = [this](LinkId l) {
    if (load_[static_cast<std::size_t>(l)]++ == 0) touched_.push_back(l);
  };
  // Each transfer's route looked up once: counted into the loads here, its share read below.
  const std::size_t first = out.size();
  for (const Transfer& t : p.transfers) {
    TransferTerms& terms = out.emplace_back();
    terms.route = router_->path(t.src, t.dst);
    for (LinkId l : router_->links(terms.route)) count(l);
    if (p.reduce) count(topo_->dma_link(t.dst));
    ++sends_[static_cast<std::size_t>(t.src)];
  }
  // Same expression as the flow model's fair share: capacity / flows on the link.
  auto share = [this](LinkId l) { return topo_->link(l).bandwidth / load_[static_cast<std::size_t>(l)]; };
  for (std::size_t i = 0; i < p.transfers.size(); ++i) {
    const Transfer& t = p.transfers[i];
    TransferTerms& terms = out[first + i];
    terms.rate = cal.stream_rate();
    for (LinkId l : router_->links(terms.route)) terms.rate = std::min(terms.rate, share(l));
    if (p.reduce) {
      terms.reduce_link = topo_->dma_link(t.dst);
      terms.reduce_rate = share(terms.reduce_link);
    }
    terms.messages = sends_[static_cast<std::size_t>(t.src)];
  }
  for (LinkId l : touched_) load_[static_cast<std::size_t>(l)] = 0;
  for (const Transfer& t : p.transfers) sends_[static_cast<std::size_t>(t.src)] = 0;
}

sim::Time ClosedForm::step_time(const Phase& p, std::span<const TransferTerms> terms) const {
  const auto& cal = topo_->cluster().instance.calibration;
  sim::Time worst = sim::Time::zero();
  for (std::size_t i = 0; i < p.transfers.size(); ++i) {
    const double bytes = p.transfers[i].bytes;
    const TransferTerms& t = terms[i];
    double data = bytes > 0 ? bytes / t.rate : 0.0;
    if (p.reduce && bytes > 0) data = std::max(data, bytes / t.reduce_rate);
    // The same composition as the flow model's (collective_run.cpp), so that they agree to the
    // picosecond: messages, then max(step, data), then the route's latency.
    const sim::Time dt = sim::Time::seconds(cal.collective_message_s * t.messages) +
                         std::max(sim::Time::seconds(cal.collective_step_s), sim::Time::seconds(data)) +
                         sim::Time::seconds(t.route.latency);
    worst = std::max(worst, dt);
  }
  return worst;
}

sim::Time ClosedForm::estimate(const Schedule& s) {
  sim::Time total = sim::Time::seconds(topo_->cluster().instance.calibration.collective_launch_s);
  for (const Phase& p : s.phases) {
    const sim::Time step = step_time(p);
    total += sim::Time::ps(step.picoseconds() * p.repeats);
  }
  return total;
}

sim::Time ClosedForm::transfer_time(const Route& r, double bytes) const {
  const auto& cal = topo_->cluster().instance.calibration;
  const double rate = std::min(r.bottleneck, cal.stream_rate());
  const double data = bytes > 0 ? bytes / rate : 0.0;
  return sim::Time::seconds(cal.collective_launch_s) + sim::Time::seconds(cal.collective_message_s) +
         std::max(sim::Time::seconds(cal.collective_step_s), sim::Time::seconds(data)) + sim::Time::seconds(r.latency);
}

Algorithm ClosedForm::choose(const Collective& c) {
  Algorithm a = c.algorithm;
  if (a == Algorithm::Auto) {
    const hw::DeviceMap& dm = topo_->devices();
    const bool spans = !c.ranks.empty() && std::any_of(c.ranks.begin(), c.ranks.end(), [&](int r) {
      return dm.instance_of(r) != dm.instance_of(c.ranks.front());
    });
    a = policy_.choice(c.op, c.bytes, spans);
    if (a != Algorithm::Optimal && !supports(a, c, topo_->cluster(), dm)) a = Algorithm::Optimal;
  }
  return a == Algorithm::Optimal ? optimum(c) : a;
}

Algorithm ClosedForm::optimum(const Collective& c) {
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
