// The flow model at run time: the fast path, its conversion into flows on contention, and the
// coarse form (see the flow-model contract in flow_model.hpp).
#include "flow_model.hpp"

#include <algorithm>
#include <cmath>

namespace trnsim::net {

namespace {
sim::Time scaled(sim::Time t, double fraction) {
  return sim::Time::ps(static_cast<std::int64_t>(std::llround(static_cast<double>(t.picoseconds()) * fraction)));
}
}  // namespace

FlowModel::FlowModel(NetworkContext& context)
    : context_(context),
      shapes_(context),
      solver_(context.topology),
      holder_(static_cast<std::size_t>(context.topology.link_count()), -1),
      claims_(static_cast<std::size_t>(context.topology.link_count()), 0),
      fast_bytes_(static_cast<std::size_t>(context.topology.link_count()), 0.0),
      fast_busy_(static_cast<std::size_t>(context.topology.link_count()), 0.0) {}

void FlowModel::start(const Collective& c, sim::InlineHandler&& done) { begin(shapes_.collective(c), std::move(done)); }

void FlowModel::start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler&& done) {
  begin(shapes_.transfer(src_rank, dst_rank, bytes), std::move(done));
}

void FlowModel::begin(const FlowShape& shape, sim::InlineHandler&& done) {
  const Slot slot = calls_.acquire();
  {
    Call& call = calls_[slot];
    call.done = std::move(done);
    call.shape = &shape;
    call.started = context_.engine.now();
  }
  bool alone = true;
  for (LinkId l : shape.links) {
    const auto ul = static_cast<std::size_t>(l);
    if (claims_[ul] > 0) alone = false;
    if (holder_[ul] >= 0) {
      alone = false;
      convert(static_cast<Slot>(holder_[ul]));  // releases every link it held
    }
  }
  if (alone) {
    Call& call = calls_[slot];
    call.mode = Mode::Fast;
    for (LinkId l : shape.links) holder_[static_cast<std::size_t>(l)] = static_cast<std::int32_t>(slot);
    call.fast_end = context_.engine.schedule(call.started + shape.time, [this, slot] { fast_done(slot); });
    return;
  }
  ++counters_.coarse;
  start_coarse(slot, shape.fixed, 1.0);
}

void FlowModel::convert(Slot slot) {
  Call& call = calls_[slot];
  const FlowShape& s = *call.shape;
  sim::Engine& engine = context_.engine;
  engine.cancel(call.fast_end);
  const double total = static_cast<double>(s.time.picoseconds());
  const double elapsed = static_cast<double>((engine.now() - call.started).picoseconds());
  const double left = total > 0 ? std::clamp(1.0 - elapsed / total, 0.0, 1.0) : 0.0;
  for (LinkId l : s.links) holder_[static_cast<std::size_t>(l)] = -1;
  credit_fast(s, 1.0 - left);
  ++counters_.converted;
  start_coarse(slot, scaled(s.fixed, left), left);
}

void FlowModel::start_coarse(Slot slot, sim::Time pre, double fraction) {
  Call& call = calls_[slot];
  const FlowShape& s = *call.shape;
  call.mode = Mode::Coarse;
  call.flows.arm(s.pairs.size());
  const sim::Time now = context_.engine.now();
  if (call.flows.done()) {
    context_.engine.schedule(now + pre, [this, slot] { finish(slot); });
    return;
  }
  call.fraction = fraction;
  for (LinkId l : s.links) ++claims_[static_cast<std::size_t>(l)];
  Router& router = context_.router;
  for (std::size_t k = 0; k < s.pairs.size(); ++k) {
    const auto& pr = s.pairs[k];
    solver_.submit(now + pre, router.links(router.path(pr.src_rank, pr.dst_rank)), pr.bytes * fraction, this,
                   (static_cast<std::uint64_t>(k) << 32) | slot, pr.max_rate);
  }
  wake();
}

void FlowModel::on_flow_done(std::uint64_t tag, sim::Time now) {
  const auto slot = static_cast<Slot>(tag & 0xFFFFFFFFu);
  Call& call = calls_[slot];
  const FlowShape::Pair& pair = call.shape->pairs[static_cast<std::size_t>(tag >> 32)];
  if (!pair.reduce) coarse_delivered_ += pair.bytes * call.fraction;
  if (!call.flows.count_down()) return;
  for (LinkId l : call.shape->links) --claims_[static_cast<std::size_t>(l)];
  context_.engine.schedule(now, [this, slot] { finish(slot); });
}

void FlowModel::fast_done(Slot slot) {
  const FlowShape& s = *calls_[slot].shape;
  for (LinkId l : s.links) holder_[static_cast<std::size_t>(l)] = -1;
  credit_fast(s, 1.0);
  ++counters_.fast;
  finish(slot);
}

void FlowModel::finish(Slot slot) {
  Call& call = calls_[slot];
  sim::InlineHandler done = std::move(call.done);
  call.shape = nullptr;
  calls_.release(slot);
  if (done) done();
}

void FlowModel::credit_fast(const FlowShape& shape, double fraction) {
  for (std::size_t i = 0; i < shape.links.size(); ++i) {
    const auto ul = static_cast<std::size_t>(shape.links[i]);
    fast_bytes_[ul] += shape.link_bytes[i] * fraction;
    fast_busy_[ul] += shape.link_busy_s[i] * fraction;
  }
  fast_delivered_ += shape.bytes * fraction;
}

void FlowModel::wake() {
  if (dispatching_) return;
  const sim::Time t = solver_.next_event();
  if (t == sim::Time::max() || t >= wake_at_) return;
  context_.engine.cancel(wake_id_);
  wake_at_ = t;
  wake_id_ = context_.engine.schedule(t, [this] { on_wake(); });
}

void FlowModel::on_wake() {
  wake_at_ = sim::Time::max();
  dispatching_ = true;
  solver_.advance_to(context_.engine.now());
  dispatching_ = false;
  wake();
}

LinkTotals FlowModel::link_totals(LinkId l) const {
  const auto ul = static_cast<std::size_t>(l);
  const LinkStats& st = solver_.link_stats()[ul];
  return {st.bytes + fast_bytes_[ul], st.busy.to_seconds() + fast_busy_[ul]};
}

NetworkCounters FlowModel::counters() const {
  NetworkCounters c = counters_;
  c.in_flight = calls_.in_use();
  c.bytes_delivered = coarse_delivered_ + fast_delivered_;
  c.flows = solver_.flows_completed();
  c.flow_events = solver_.events_processed();
  c.shapes = shapes_.size();
  c.shape_flows = shapes_.solver().flows_completed();
  c.shape_events = shapes_.solver().events_processed();
  return c;
}

}  // namespace trnsim::net
