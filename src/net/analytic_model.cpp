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
  Router& router = context_.router;
  const Route& r = router.path(src_rank, dst_rank);
  for (LinkId l : router.links(r)) link_bytes_[static_cast<std::size_t>(l)] += bytes;
  context_.engine.schedule_in(context_.transfer_time(r, bytes), std::move(done));
}

LinkTotals AnalyticModel::link_totals(LinkId l) const {
  const double bytes = link_bytes_[static_cast<std::size_t>(l)];
  return {bytes, bytes / context_.topology.link(l).bandwidth};
}

AnalyticResult AnalyticModel::result(const Schedule& s) {
  const Topology& topo = context_.topology;
  Router& router = context_.router;
  std::vector<double> per_link(static_cast<std::size_t>(topo.link_count()), 0.0);
  for (const Phase& p : s.phases) {
    for (const Transfer& t : p.transfers) {
      const double b = t.bytes * p.repeats;
      for (LinkId l : router.links(router.path(t.src, t.dst))) {
        per_link[static_cast<std::size_t>(l)] += b;
      }
      // A reduction reads the receiver's own operand through its chip's DMA link.
      if (p.reduce) per_link[static_cast<std::size_t>(topo.dma_link(t.dst))] += b;
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
