#include "trnsim/net/network.hpp"

#include "trnsim/error.hpp"

namespace trnsim::net {

Network::Network(const hw::ClusterSpec& cluster, NetworkModel model, sim::Engine& engine)
    : model_(model),
      engine_(&engine),
      topo_(cluster),
      router_(topo_),
      analytic_(router_),
      solver_(topo_),
      isolated_(topo_),
      holder_(static_cast<std::size_t>(topo_.link_count()), -1),
      claims_(static_cast<std::size_t>(topo_.link_count()), 0),
      fast_bytes_(static_cast<std::size_t>(topo_.link_count()), 0.0),
      fast_busy_(static_cast<std::size_t>(topo_.link_count()), 0.0),
      analytic_bytes_(static_cast<std::size_t>(topo_.link_count()), 0.0) {}

Network::~Network() = default;

Schedule Network::schedule(const Collective& c) {
  return make_schedule(c, analytic_.choose(c), topo_.cluster(), topo_.devices());
}

std::uint32_t Network::acquire(sim::InlineHandler done) {
  std::uint32_t slot = 0;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    pending_.emplace_back();
    slot = static_cast<std::uint32_t>(pending_.size() - 1);
  }
  pending_[slot].done = std::move(done);
  pending_[slot].used = true;
  ++in_flight_;
  return slot;
}

void Network::finish(std::uint32_t slot) {
  Pending& p = pending_[slot];
  sim::InlineHandler done = std::move(p.done);
  p.shape = nullptr;
  p.used = false;
  free_.push_back(slot);
  --in_flight_;
  if (done) done();
}

void Network::start(const Collective& c, sim::InlineHandler done) {
  if (model_ == NetworkModel::Analytic) {
    const AnalyticResult* r = analytic_cache_.find(c);
    if (r == nullptr) r = &analytic_cache_.insert(c, analytic_result(schedule(c)));
    for (const auto& [link, bytes] : r->link_bytes) analytic_bytes_[static_cast<std::size_t>(link)] += bytes;
    engine_->schedule_in(r->time, std::move(done));
    return;
  }
  const FlowShape& shape = collective_shape(c);
  begin(acquire(std::move(done)), shape);
}

void Network::start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler done) {
  const auto& dm = topo_.devices();
  const int a = dm.chip_of(src_rank), b = dm.chip_of(dst_rank);
  const auto& cal = topo_.cluster().instance.calibration;
  const Route& r = router_.route(a, b);
  const sim::Time delay = sim::Time::seconds(cal.collective_startup_s) + sim::Time::seconds(cal.collective_step_s + r.latency);
  if (model_ == NetworkModel::Analytic) {
    for (LinkId l : router_.links(r)) analytic_bytes_[static_cast<std::size_t>(l)] += bytes;
    const sim::Time t = delay + (bytes > 0 ? sim::Time::seconds(bytes / r.bottleneck) : sim::Time::zero());
    engine_->schedule_in(t, std::move(done));
    return;
  }
  const FlowShape& shape = transfer_shape(src_rank, dst_rank, bytes);
  begin(acquire(std::move(done)), shape);
}


void Network::wake() {
  if (dispatching_) return;
  const sim::Time t = solver_.next_event();
  if (t == sim::Time::max() || t >= wake_at_) return;
  engine_->cancel(wake_id_);
  wake_at_ = t;
  wake_id_ = engine_->schedule(t, [this] { on_wake(); });
}

void Network::on_wake() {
  wake_at_ = sim::Time::max();
  dispatching_ = true;
  solver_.advance_to(engine_->now());
  dispatching_ = false;
  wake();
}

AnalyticResult Network::analytic_result(const Schedule& s) {
  std::vector<double> per_link(static_cast<std::size_t>(topo_.link_count()), 0.0);
  const auto& dm = topo_.devices();
  for (const Phase& p : s.phases) {
    for (const Transfer& t : p.transfers) {
      for (LinkId l : router_.links(router_.route(dm.chip_of(t.src), dm.chip_of(t.dst)))) {
        per_link[static_cast<std::size_t>(l)] += t.bytes * p.repeats;
      }
    }
  }
  AnalyticResult r;
  r.time = analytic_.estimate(s);
  for (LinkId l = 0; l < topo_.link_count(); ++l) {
    if (per_link[static_cast<std::size_t>(l)] > 0) r.link_bytes.emplace_back(l, per_link[static_cast<std::size_t>(l)]);
  }
  return r;
}

sim::Time Network::expected(const Collective& c) {
  if (const sim::Time* t = expected_.find(c)) return *t;
  return expected_.insert(c, analytic_.estimate(c));
}

std::vector<LinkUsage> Network::link_usage() const {
  std::vector<LinkUsage> out;
  const auto& stats = solver_.link_stats();
  for (LinkId l = 0; l < topo_.link_count(); ++l) {
    const auto ul = static_cast<std::size_t>(l);
    const Link& link = topo_.link(l);
    const bool flow = model_ == NetworkModel::Flow;
    const double bytes = flow ? stats[ul].bytes + fast_bytes_[ul] : analytic_bytes_[ul];
    if (!(bytes > 0)) continue;
    const double busy = flow ? stats[ul].busy.to_seconds() + fast_busy_[ul] : bytes / link.bandwidth;
    out.push_back(LinkUsage{l, link.kind, topo_.vertex_name(link.src), topo_.vertex_name(link.dst), link.bandwidth,
                            bytes, busy});
  }
  return out;
}

}  // namespace trnsim::net
