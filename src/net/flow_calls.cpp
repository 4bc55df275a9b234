// Flow mode at run time: the fast path, its conversion into flows on contention, and the coarse
// form (see the flow-mode contract in network.hpp).
#include <algorithm>
#include <cmath>

#include "trnsim/error.hpp"
#include "trnsim/net/network.hpp"

namespace trnsim::net {

namespace {
sim::Time scaled(sim::Time t, double fraction) {
  return sim::Time::ps(static_cast<std::int64_t>(std::llround(static_cast<double>(t.picoseconds()) * fraction)));
}
}  // namespace

void Network::begin(std::uint32_t slot, const FlowShape& shape) {
  pending_[slot].shape = &shape;
  pending_[slot].started = engine_->now();
  bool alone = true;
  for (LinkId l : shape.links) {
    const auto ul = static_cast<std::size_t>(l);
    if (claims_[ul] > 0) alone = false;
    if (holder_[ul] >= 0) {
      alone = false;
      convert(static_cast<std::uint32_t>(holder_[ul]));  // releases every link it held
    }
  }
  if (alone) {
    Pending& p = pending_[slot];
    p.mode = Mode::Fast;
    for (LinkId l : shape.links) holder_[static_cast<std::size_t>(l)] = static_cast<std::int32_t>(slot);
    p.fast_end = engine_->schedule(p.started + shape.time, [this, slot] { fast_done(slot); });
    return;
  }
  ++counters_.coarse;
  start_coarse(slot, shape.fixed, 1.0);
}

void Network::convert(std::uint32_t slot) {
  Pending& p = pending_[slot];
  const FlowShape& s = *p.shape;
  engine_->cancel(p.fast_end);
  const double total = static_cast<double>(s.time.picoseconds());
  const double elapsed = static_cast<double>((engine_->now() - p.started).picoseconds());
  const double left = total > 0 ? std::clamp(1.0 - elapsed / total, 0.0, 1.0) : 0.0;
  for (LinkId l : s.links) holder_[static_cast<std::size_t>(l)] = -1;
  credit_fast(s, 1.0 - left);
  ++counters_.converted;
  start_coarse(slot, scaled(s.fixed, left), left);
}

void Network::start_coarse(std::uint32_t slot, sim::Time pre, double fraction) {
  Pending& p = pending_[slot];
  const FlowShape& s = *p.shape;
  p.mode = Mode::Coarse;
  p.flows_left = s.pairs.size();
  const sim::Time now = engine_->now();
  if (p.flows_left == 0) {
    engine_->schedule(now + pre, [this, slot] { finish(slot); });
    return;
  }
  for (LinkId l : s.links) ++claims_[static_cast<std::size_t>(l)];
  for (const auto& pr : s.pairs) {
    solver_.submit(now + pre, router_.links(router_.route(pr.src_chip, pr.dst_chip)), pr.bytes * fraction, this, slot);
  }
  wake();
}

void Network::on_flow_done(std::uint64_t tag, sim::Time now) {
  const auto slot = static_cast<std::uint32_t>(tag);
  Pending& p = pending_[slot];
  if (p.flows_left == 0) throw InternalError("network: a flow finished for a call with none left");
  if (--p.flows_left > 0) return;
  for (LinkId l : p.shape->links) --claims_[static_cast<std::size_t>(l)];
  engine_->schedule(now, [this, slot] { finish(slot); });
}

void Network::fast_done(std::uint32_t slot) {
  const FlowShape& s = *pending_[slot].shape;
  for (LinkId l : s.links) holder_[static_cast<std::size_t>(l)] = -1;
  credit_fast(s, 1.0);
  ++counters_.fast;
  finish(slot);
}

void Network::credit_fast(const FlowShape& shape, double fraction) {
  for (std::size_t i = 0; i < shape.links.size(); ++i) {
    const auto ul = static_cast<std::size_t>(shape.links[i]);
    fast_bytes_[ul] += shape.link_bytes[i] * fraction;
    fast_busy_[ul] += shape.link_busy_s[i] * fraction;
  }
  fast_delivered_ += shape.bytes * fraction;
}

Network::FlowCounters Network::flow_counters() const {
  FlowCounters c = counters_;
  c.shapes = collective_shapes_.size() + transfer_shapes_.size();
  return c;
}

}  // namespace trnsim::net
