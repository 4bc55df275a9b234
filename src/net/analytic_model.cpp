#include "analytic_model.hpp"

namespace trnsim::net {

AnalyticModel::AnalyticModel(NetworkContext& context)
    : context_(context), link_bytes_(static_cast<std::size_t>(context.topology.link_count()), 0.0) {}

void AnalyticModel::start(const Collective& c, sim::InlineHandler&& done) {
  const AnalyticResult* r = cache_.find(c);
  if (r == nullptr) r = &cache_.insert(c, result(context_.schedule(c)));
  for (const auto& [link, bytes] : r->link_bytes) link_bytes_[static_cast<std::size_t>(link)] += bytes;
  context_.engine.schedule_in(r->time, std::move(done));
}

void AnalyticModel::start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler&& done) {
  const auto& dm = context_.topology.devices();
  Router& router = context_.router;
  const Route& r = router.route(dm.chip_of(src_rank), dm.chip_of(dst_rank));
  for (LinkId l : router.links(r)) link_bytes_[static_cast<std::size_t>(l)] += bytes;
  const sim::Time t =
      context_.transfer_fixed(r) + (bytes > 0 ? sim::Time::seconds(bytes / r.bottleneck) : sim::Time::zero());
  context_.engine.schedule_in(t, std::move(done));
}

LinkTotals AnalyticModel::link_totals(LinkId l) const {
  const double bytes = link_bytes_[static_cast<std::size_t>(l)];
  return {bytes, bytes / context_.topology.link(l).bandwidth};
}

AnalyticResult AnalyticModel::result(const Schedule& s) {
  const Topology& topo = context_.topology;
  Router& router = context_.router;
  std::vector<double> per_link(static_cast<std::size_t>(topo.link_count()), 0.0);
  const auto& dm = topo.devices();
  for (const Phase& p : s.phases) {
    for (const Transfer& t : p.transfers) {
      for (LinkId l : router.links(router.route(dm.chip_of(t.src), dm.chip_of(t.dst)))) {
        per_link[static_cast<std::size_t>(l)] += t.bytes * p.repeats;
      }
    }
  }
  AnalyticResult r;
  r.time = context_.closed_form.estimate(s);
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    if (per_link[static_cast<std::size_t>(l)] > 0) r.link_bytes.emplace_back(l, per_link[static_cast<std::size_t>(l)]);
  }
  return r;
}

}  // namespace trnsim::net
