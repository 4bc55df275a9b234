#include "trnsim/net/flow_solver.hpp"

#include <algorithm>
#include <limits>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::net {

namespace {
struct Later {
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.at != b.at ? a.at > b.at : a.seq > b.seq;
  }
};
struct HigherShare {
  bool operator()(const std::pair<double, LinkId>& a, const std::pair<double, LinkId>& b) const {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  }
};
}  // namespace

FlowSolver::FlowSolver(const Topology& topology)
    : topo_(&topology),
      links_(static_cast<std::size_t>(topology.link_count())),
      stats_(static_cast<std::size_t>(topology.link_count())) {
  for (std::size_t l = 0; l < links_.size(); ++l) links_[l].capacity = topology.link(static_cast<LinkId>(l)).bandwidth;
}

void FlowSolver::push(sim::Time at, std::uint32_t flow, std::uint32_t version, EventKind kind) {
  calendar_.push_back(Event{at, seq_++, flow, version, kind});
  std::push_heap(calendar_.begin(), calendar_.end(), Later{});
}

void FlowSolver::submit(sim::Time start_at, std::span<const LinkId> route, double bytes, FlowListener* listener,
                        std::uint64_t tag, double max_rate) {
  if (!(max_rate > 0)) throw InternalError("flow solver: a flow's rate cap must be positive");
  if (start_at < now_) throw InternalError("flow solver: a flow cannot start in the past");
  if (route.size() > static_cast<std::size_t>(kMaxHops)) {
    throw InternalError(fmt::format("flow solver: route of {} hops exceeds {}", route.size(), kMaxHops));
  }
  const std::uint32_t f = flows_.acquire();
  Flow& fl = flows_[f];
  fl.hops = static_cast<int>(route.size());
  std::copy(route.begin(), route.end(), fl.links.begin());
  fl.bytes = bytes;
  fl.remaining = bytes;
  fl.rate = 0;
  fl.max_rate = max_rate;
  fl.listener = listener;
  fl.tag = tag;
  ++fl.version;
  push(start_at, f, fl.version, EventKind::Start);
}

sim::Time FlowSolver::next_event() {
  while (!calendar_.empty()) {
    const Event& e = calendar_.front();
    if (e.kind == EventKind::Start || flows_[e.flow].version == e.version) return e.at;
    std::pop_heap(calendar_.begin(), calendar_.end(), Later{});  // stale finish: its rate changed
    calendar_.pop_back();
  }
  return sim::Time::max();
}

void FlowSolver::advance_to(sim::Time t) {
  // Events at the same time are handled as one batch: every start and finish of that instant is
  // applied, the rates are recomputed once over the union of the links they touch, and only then
  // are the listeners told (in event order). Listeners may submit more for the same instant.
  for (sim::Time at = next_event(); at <= t; at = next_event()) {
    now_ = at;
    seeds_.clear();
    notify_.clear();
    while (next_event() == at) {
      const Event e = calendar_.front();
      std::pop_heap(calendar_.begin(), calendar_.end(), Later{});
      calendar_.pop_back();
      ++events_;
      if (e.kind == EventKind::Start) {
        start(e.flow);
      } else {
        finish(e.flow);
      }
    }
    rebalance(seeds_);
    for (const auto& [listener, tag] : notify_) listener->on_flow_done(tag, now_);
  }
  now_ = t;
}

void FlowSolver::run() {
  for (sim::Time t = next_event(); t != sim::Time::max(); t = next_event()) advance_to(t);
}

void FlowSolver::start(std::uint32_t f) {
  Flow& fl = flows_[f];
  if (fl.hops == 0 || !(fl.bytes > 0)) {
    fl.hops = 0;
    finish(f);
    return;
  }
  fl.last = now_;
  for (int h = 0; h < fl.hops; ++h) {
    LinkState& ls = links_[static_cast<std::size_t>(fl.links[static_cast<std::size_t>(h)])];
    if (ls.flows.empty()) ls.busy_since = now_;
    fl.pos[static_cast<std::size_t>(h)] = static_cast<std::int32_t>(ls.flows.size());
    ls.flows.push_back(f);
  }
  ++active_;
  seeds_.insert(seeds_.end(), fl.links.begin(), fl.links.begin() + fl.hops);
}

void FlowSolver::finish(std::uint32_t f) {
  std::array<LinkId, kMaxHops> route{};
  int hops = 0;
  {
    Flow& fl = flows_[f];
    hops = fl.hops;
    route = fl.links;
    for (int h = 0; h < hops; ++h) {
      const auto l = static_cast<std::size_t>(fl.links[static_cast<std::size_t>(h)]);
      LinkState& ls = links_[l];
      // Swap-remove f from the link's list, fixing the moved flow's position.
      const auto p = static_cast<std::size_t>(fl.pos[static_cast<std::size_t>(h)]);
      const std::uint32_t moved = ls.flows.back();
      ls.flows[p] = moved;
      ls.flows.pop_back();
      if (moved != f) {
        Flow& m = flows_[moved];
        for (int k = 0; k < m.hops; ++k) {
          if (m.links[static_cast<std::size_t>(k)] == static_cast<LinkId>(l)) m.pos[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(p);
        }
      }
      LinkStats& st = stats_[l];
      st.bytes += fl.bytes;
      ++st.flows;
      if (ls.flows.empty()) st.busy += now_ - ls.busy_since;
    }
    if (hops > 0) --active_;
    ++fl.version;  // invalidates any pending finish event
    fl.hops = 0;
    delivered_ += fl.bytes;
  }
  ++completed_;
  if (flows_[f].listener != nullptr) notify_.emplace_back(flows_[f].listener, flows_[f].tag);
  flows_.release(f);
  seeds_.insert(seeds_.end(), route.begin(), route.begin() + hops);
}

void FlowSolver::rebalance(std::span<const LinkId> seeds) {
  if (++epoch_ == 0) {  // wrapped: clear every mark once
    for (auto& l : links_) l.mark = 0;
    for (std::uint32_t f = 0; f < flows_.capacity(); ++f) flows_[f].mark = flows_[f].frozen = 0;
    epoch_ = 1;
  }
  // The connected component: links and flows reachable from the seeds through shared links.
  stack_.clear();
  comp_links_.clear();
  comp_flows_.clear();
  caps_.clear();
  for (LinkId l : seeds) {
    LinkState& ls = links_[static_cast<std::size_t>(l)];
    if (ls.mark != epoch_) {
      ls.mark = epoch_;
      stack_.push_back(l);
    }
  }
  while (!stack_.empty()) {
    const LinkId l = stack_.back();
    stack_.pop_back();
    comp_links_.push_back(l);
    for (std::uint32_t f : links_[static_cast<std::size_t>(l)].flows) {
      Flow& fl = flows_[f];
      if (fl.mark == epoch_) continue;
      fl.mark = epoch_;
      comp_flows_.push_back(f);
      if (fl.max_rate < std::numeric_limits<double>::infinity()) caps_.emplace_back(fl.max_rate, f);
      for (int h = 0; h < fl.hops; ++h) {
        LinkState& m = links_[static_cast<std::size_t>(fl.links[static_cast<std::size_t>(h)])];
        if (m.mark != epoch_) {
          m.mark = epoch_;
          stack_.push_back(fl.links[static_cast<std::size_t>(h)]);
        }
      }
    }
  }
  // Progressive filling: the link with the smallest fair share fixes its unfrozen flows at that
  // share. Shares only grow as flows freeze elsewhere, so stale heap entries are re-pushed. A
  // capped flow is a link of its own with one flow: when its cap is below every link's share, it
  // freezes at its cap first.
  fill_.clear();
  std::sort(caps_.begin(), caps_.end());
  std::size_t next_cap = 0;
  auto freeze = [this](std::uint32_t f, double rate) {
    Flow& fl = flows_[f];
    fl.frozen = epoch_;
    fl.new_rate = rate;
    for (int h = 0; h < fl.hops; ++h) {
      LinkState& m = links_[static_cast<std::size_t>(fl.links[static_cast<std::size_t>(h)])];
      m.rem -= rate;
      --m.unfrozen;
    }
  };
  for (LinkId l : comp_links_) {
    LinkState& ls = links_[static_cast<std::size_t>(l)];
    ls.rem = ls.capacity;
    ls.unfrozen = static_cast<int>(ls.flows.size());
    if (ls.unfrozen > 0) fill_.emplace_back(ls.capacity / ls.unfrozen, l);
  }
  std::make_heap(fill_.begin(), fill_.end(), HigherShare{});
  while (!fill_.empty()) {
    if (next_cap < caps_.size() && caps_[next_cap].first < fill_.front().first) {
      const std::uint32_t f = caps_[next_cap++].second;
      if (flows_[f].frozen != epoch_) freeze(f, flows_[f].max_rate);
      continue;
    }
    std::pop_heap(fill_.begin(), fill_.end(), HigherShare{});
    const auto [share, l] = fill_.back();
    fill_.pop_back();
    LinkState& ls = links_[static_cast<std::size_t>(l)];
    if (ls.unfrozen == 0) continue;
    const double current = std::max(ls.rem, 0.0) / ls.unfrozen;
    if (current != share) {
      fill_.emplace_back(current, l);
      std::push_heap(fill_.begin(), fill_.end(), HigherShare{});
      continue;
    }
    for (std::uint32_t f : ls.flows) {
      if (flows_[f].frozen != epoch_) freeze(f, share);
    }
  }
  // Reschedule the flows whose rate changed; the others keep their pending finish.
  for (std::uint32_t f : comp_flows_) {
    Flow& fl = flows_[f];
    if (fl.new_rate == fl.rate) continue;
    fl.remaining = std::max(0.0, fl.remaining - fl.rate * (now_ - fl.last).to_seconds());
    fl.last = now_;
    fl.rate = fl.new_rate;
    ++fl.version;
    if (!(fl.rate > 0)) throw InternalError("flow solver: a flow got no bandwidth");
    push(now_ + sim::Time::seconds(fl.remaining / fl.rate), f, fl.version, EventKind::Finish);
  }
}

}  // namespace trnsim::net
