#include "trnsim/net/collective_run.hpp"

#include <algorithm>

#include "trnsim/error.hpp"

namespace trnsim::net {

CollectiveRun::CollectiveRun(Schedule schedule, Router& router, FlowSolver& solver)
    : schedule_(std::move(schedule)), router_(&router), solver_(&solver) {
  const auto& cal = router.topology().cluster().instance.calibration;
  step_s_ = cal.collective_step_s;
  message_s_ = cal.collective_message_s;
  launch_s_ = cal.collective_launch_s;
  stream_rate_ = cal.stream_rate();
  for (const Phase& p : schedule_.phases) {
    for (const Transfer& t : p.transfers) {
      ranks_.push_back(t.src);
      ranks_.push_back(t.dst);
    }
  }
  std::sort(ranks_.begin(), ranks_.end());
  ranks_.erase(std::unique(ranks_.begin(), ranks_.end()), ranks_.end());
  const std::size_t n = ranks_.size();
  const std::size_t phases = schedule_.phases.size();
  offsets_.resize(phases);
  items_.resize(phases);
  src_.resize(phases);
  dst_.resize(phases);
  sends_.resize(phases);
  parts_.resize(phases);
  begin_.resize(phases);
  latency_.resize(phases);
  for (std::size_t p = 0; p < phases; ++p) {
    const auto& tr = schedule_.phases[p].transfers;
    auto& off = offsets_[p];
    off.assign(n + 1, 0);
    src_[p].resize(tr.size());
    dst_[p].resize(tr.size());
    sends_[p].assign(n, 0);
    parts_[p].assign(tr.size(), sim::Countdown{});
    begin_[p].assign(tr.size(), sim::Time::zero());
    latency_[p].resize(tr.size());
    for (std::size_t i = 0; i < tr.size(); ++i) {
      if (tr[i].src == tr[i].dst) throw InternalError("collective schedule: a rank sends to itself");
      src_[p][i] = local(tr[i].src);
      dst_[p][i] = local(tr[i].dst);
      ++off[static_cast<std::size_t>(src_[p][i]) + 1];
      ++off[static_cast<std::size_t>(dst_[p][i]) + 1];
      ++sends_[p][static_cast<std::size_t>(src_[p][i])];
      latency_[p][i] = sim::Time::seconds(router_->path(tr[i].src, tr[i].dst).latency);
    }
    for (std::size_t r = 0; r < n; ++r) off[r + 1] += off[r];
    auto& it = items_[p];
    it.assign(static_cast<std::size_t>(off[n]), 0);
    std::vector<std::int32_t> fill(off.begin(), off.end() - 1);
    for (std::size_t i = 0; i < tr.size(); ++i) {
      it[static_cast<std::size_t>(fill[static_cast<std::size_t>(src_[p][i])]++)] = static_cast<std::int32_t>(i);
      it[static_cast<std::size_t>(fill[static_cast<std::size_t>(dst_[p][i])]++)] = static_cast<std::int32_t>(i);
    }
  }
  phase_.assign(n, -1);
  rep_.assign(n, 0);
  outstanding_.assign(n, sim::Countdown{});
  ranks_left_.arm(n);
}

int CollectiveRun::local(int rank) const {
  return static_cast<int>(std::lower_bound(ranks_.begin(), ranks_.end(), rank) - ranks_.begin());
}

void CollectiveRun::start(sim::Time t0, FlowListener* listener, std::uint64_t id) {
  listener_ = listener;
  id_ = id;
  const sim::Time ready = t0 + sim::Time::seconds(launch_s_);
  if (ranks_.empty()) {
    solver_->submit(ready, {}, 0, this, kTimerTag);
    return;
  }
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) arrive(r, 0, 0, ready);
}

void CollectiveRun::arrive(int r, int phase, int rep, sim::Time at) {
  const auto ur = static_cast<std::size_t>(r);
  // Skip the phases this rank takes no part in.
  auto p = static_cast<std::size_t>(phase);
  while (p < offsets_.size() && offsets_[p][ur + 1] == offsets_[p][ur]) {
    ++p;
    rep = 0;
  }
  if (p == offsets_.size()) {
    phase_[ur] = static_cast<int>(p);
    if (ranks_left_.count_down() && listener_ != nullptr) {
      listener_->on_flow_done(id_, at);
    }
    return;
  }
  phase_[ur] = static_cast<int>(p);
  rep_[ur] = rep;
  outstanding_[ur].arm(static_cast<std::size_t>(offsets_[p][ur + 1] - offsets_[p][ur]));
  const Phase& step = schedule_.phases[p];
  const auto& tr = step.transfers;
  for (auto k = offsets_[p][ur]; k < offsets_[p][ur + 1]; ++k) {
    const auto i = static_cast<std::size_t>(items_[p][static_cast<std::size_t>(k)]);
    const auto other = static_cast<std::size_t>(src_[p][i] == r ? dst_[p][i] : src_[p][i]);
    if (phase_[other] != static_cast<int>(p) || rep_[other] != rep || other == ur) continue;
    // Both ranks are at this step: the later arrival starts the transfer, once the sender has
    // posted its messages of the step; the route's latency follows its last byte (complete()).
    const Route& route = router_->path(tr[i].src, tr[i].dst);
    const double messages = sends_[p][static_cast<std::size_t>(src_[p][i])];
    const sim::Time begin = at + sim::Time::seconds(message_s_ * messages);
    begin_[p][i] = begin;
    parts_[p][i].arm(step.reduce ? 2u : 1u);
    sent_ += tr[i].bytes;
    solver_->submit(begin, router_->links(route), tr[i].bytes, this, tag(p, Part::Data, i), stream_rate_);
    if (step.reduce) {
      solver_->submit(begin, router_->links(router_->path(tr[i].dst, tr[i].dst)), tr[i].bytes, this,
                      tag(p, Part::Reduce, i));
    }
  }
}

void CollectiveRun::leave(int r, sim::Time at) {
  const auto ur = static_cast<std::size_t>(r);
  const auto p = static_cast<std::size_t>(phase_[ur]);
  if (rep_[ur] + 1 < schedule_.phases[p].repeats) {
    arrive(r, static_cast<int>(p), rep_[ur] + 1, at);
  } else {
    arrive(r, static_cast<int>(p) + 1, 0, at);
  }
}

void CollectiveRun::on_flow_done(std::uint64_t flow_tag, sim::Time now) {
  if (flow_tag == kTimerTag) {
    if (listener_ != nullptr) listener_->on_flow_done(id_, now);
    return;
  }
  const auto p = static_cast<std::size_t>(flow_tag >> 34);
  const auto part = static_cast<Part>((flow_tag >> 32) & 3u);
  const auto i = static_cast<std::size_t>(flow_tag & 0xFFFFFFFFu);
  if (part == Part::StepEnd) {
    complete(p, i, now);
    return;
  }
  if (part == Part::Data) received_ += schedule_.phases[p].transfers[i].bytes;
  if (!parts_[p][i].count_down()) return;
  // The step's synchronisation runs alongside its data (a transfer's flows last at least
  // step_s_), then the last byte crosses the route. Every flow of a step thus starts when its
  // ranks arrive, whatever the route's latency, so that flows sharing a DMA link start together
  // as the closed form's even shares assume.
  const sim::Time end = std::max(now, begin_[p][i] + sim::Time::seconds(step_s_)) + latency_[p][i];
  if (now < end) {
    solver_->submit(end, {}, 0, this, tag(p, Part::StepEnd, i));
    return;
  }
  complete(p, i, now);
}

void CollectiveRun::complete(std::size_t p, std::size_t i, sim::Time at) {
  for (int r : {src_[p][i], dst_[p][i]}) {
    if (outstanding_[static_cast<std::size_t>(r)].count_down()) leave(r, at);
  }
}

}  // namespace trnsim::net
