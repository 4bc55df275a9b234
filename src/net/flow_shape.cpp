// FlowShapes: a call alone on the flow model, measured once per distinct call.
#include "flow_shape.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "trnsim/error.hpp"
#include "trnsim/net/collective_run.hpp"

namespace trnsim::net {

namespace {
// Records when the isolated run ends: the collective's completion, or the last coarse flow.
struct EndTime final : CollectiveListener, FlowListener {
  sim::Time at;
  void on_collective_done(std::uint64_t, sim::Time now) override { at = now; }
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
  std::map<std::pair<int, int>, std::size_t> pair_index;
  std::vector<double> per_link(static_cast<std::size_t>(topo.link_count()), 0.0);
  for (const Phase& p : sched.phases) {
    for (const Transfer& t : p.transfers) {
      const double b = t.bytes * p.repeats;
      shape.bytes += b;
      const int a = dm.chip_of(t.src), d = dm.chip_of(t.dst);
      const auto [it, fresh] = pair_index.emplace(std::pair(a, d), shape.pairs.size());
      if (fresh) shape.pairs.push_back(FlowShape::Pair{a, d, 0.0});
      shape.pairs[it->second].bytes += b;
      for (LinkId l : router.links(router.route(a, d))) per_link[static_cast<std::size_t>(l)] += b;
    }
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
    isolated_.submit(t1, router.links(router.route(pr.src_chip, pr.dst_chip)), pr.bytes, &coarse_end, 0);
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
  const auto& dm = context_.topology.devices();
  Router& router = context_.router;
  const int a = dm.chip_of(src_rank), b = dm.chip_of(dst_rank);
  const Route& r = router.route(a, b);
  FlowShape shape;
  shape.fixed = context_.transfer_fixed(r);
  shape.time = shape.fixed;
  shape.bytes = bytes;
  shape.pairs.push_back(FlowShape::Pair{a, b, bytes});
  if (bytes > 0 && r.hops > 0) {
    shape.time += sim::Time::seconds(bytes / r.bottleneck);
    const auto links = router.links(r);
    shape.links.assign(links.begin(), links.end());
    std::sort(shape.links.begin(), shape.links.end());
    shape.link_bytes.assign(shape.links.size(), bytes);
    shape.link_busy_s.assign(shape.links.size(), bytes / r.bottleneck);
  }
  return transfers_.insert(key_scratch_, std::move(shape));
}

}  // namespace trnsim::net
