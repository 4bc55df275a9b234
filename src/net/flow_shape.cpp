// FlowShapes: a call alone on the flow model, measured once per distinct call.
#include "flow_shape.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "trnsim/error.hpp"
#include "trnsim/net/collective_run.hpp"

namespace trnsim::net {

namespace {
// Records when the isolated run ends: the last of the coarse flows, or the collective run's one
// completion (it starts at or after `at`'s initial value, so the maximum is that completion).
struct EndTime final : FlowListener {
  sim::Time at;
  void on_flow_done(std::uint64_t, sim::Time now) override { at = std::max(at, now); }
};
}  // namespace

FlowShapes::FlowShapes(NetworkContext& context) : context_(context), isolated_(context.topology) {}

const FlowShape& FlowShapes::collective(const Collective& c) {
  if (const FlowShape* found = collectives_.find(c)) return *found;
  const Topology& topo = context_.topology;
  Router& router = context_.router;
  Schedule sched = context_.schedule(c);
  const auto& dm = topo.devices();
  FlowShape shape;
  // Coarse pairs in order of first appearance, and the bytes each link carries.
  std::map<std::tuple<int, int, bool>, std::size_t> pair_index;
  std::vector<double> per_link(static_cast<std::size_t>(topo.link_count()), 0.0);
  std::vector<std::vector<int>> receivers;  // per pair: the ranks it sends to (one stream each)
  auto add = [&](int src, int dst, bool reduce, double b) {
    const auto [it, fresh] = pair_index.emplace(std::tuple(src, dm.chip_of(dst), reduce), shape.pairs.size());
    if (fresh) {
      shape.pairs.push_back(FlowShape::Pair{src, dst, 0.0, reduce});
      receivers.emplace_back();
    }
    shape.pairs[it->second].bytes += b;
    auto& to = receivers[it->second];
    if (!reduce && std::find(to.begin(), to.end(), dst) == to.end()) to.push_back(dst);
    for (LinkId l : router.links(router.path(src, dst))) per_link[static_cast<std::size_t>(l)] += b;
  };
  for (const Phase& p : sched.phases) {
    for (const Transfer& t : p.transfers) {
      const double b = t.bytes * p.repeats;
      shape.bytes += b;
      add(t.src, t.dst, false, b);
      if (p.reduce) add(t.dst, t.dst, true, b);
    }
  }
  const double stream = topo.cluster().instance.calibration.stream_rate();
  for (std::size_t k = 0; k < shape.pairs.size(); ++k) {
    if (!shape.pairs[k].reduce) shape.pairs[k].max_rate = stream * static_cast<double>(receivers[k].size());
  }
  // The full schedule alone, every step a flow: T and each link's busy time.
  const std::vector<LinkStats> before = isolated_.link_stats();
  EndTime end;
  const sim::Time t0 = isolated_.now();
  {
    CollectiveRun run(std::move(sched), router, isolated_);
    run.start(t0, &end, 0);
    isolated_.run();
    if (!run.done()) throw InternalError("flow shape: the isolated collective did not complete");
  }
  shape.time = end.at - t0;
  const auto& after = isolated_.link_stats();
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    const auto ul = static_cast<std::size_t>(l);
    if (!(per_link[ul] > 0)) continue;
    shape.links.push_back(l);
    shape.link_bytes.push_back(per_link[ul]);
    shape.link_busy_s.push_back((after[ul].busy - before[ul].busy).to_seconds());
  }
  // The coarse form alone: its bandwidth time, and F = T minus it.
  const sim::Time t1 = isolated_.now();
  EndTime coarse_end;
  coarse_end.at = t1;
  for (const auto& pr : shape.pairs) {
    isolated_.submit(t1, router.links(router.path(pr.src_rank, pr.dst_rank)), pr.bytes, &coarse_end, 0, pr.max_rate);
  }
  isolated_.run();
  const sim::Time coarse = coarse_end.at - t1;
  shape.fixed = shape.time > coarse ? shape.time - coarse : sim::Time::zero();
  return collectives_.insert(c, std::move(shape));
}

const FlowShape& FlowShapes::transfer(int src_rank, int dst_rank, double bytes) {
  key_scratch_.op = CollectiveOp::SendRecv;
  key_scratch_.algorithm = Algorithm::Direct;
  key_scratch_.bytes = bytes;
  key_scratch_.ranks.assign({src_rank, dst_rank});
  if (const FlowShape* found = transfers_.find(key_scratch_)) return *found;
  Router& router = context_.router;
  const Route& r = router.path(src_rank, dst_rank);
  FlowShape shape;
  shape.time = context_.transfer_time(r, bytes);
  shape.fixed = shape.time;
  shape.bytes = bytes;
  shape.pairs.push_back(
      FlowShape::Pair{src_rank, dst_rank, bytes, false, context_.topology.cluster().instance.calibration.stream_rate()});
  if (bytes > 0 && r.hops > 0) {
    const double rate = std::min(r.bottleneck, shape.pairs.back().max_rate);
    const sim::Time coarse = sim::Time::seconds(bytes / rate);
    shape.fixed = shape.time > coarse ? shape.time - coarse : sim::Time::zero();
    const auto links = router.links(r);
    shape.links.assign(links.begin(), links.end());
    std::sort(shape.links.begin(), shape.links.end());
    shape.link_bytes.assign(shape.links.size(), bytes);
    shape.link_busy_s.assign(shape.links.size(), bytes / rate);
  }
  return transfers_.insert(key_scratch_, std::move(shape));
}

}  // namespace trnsim::net
