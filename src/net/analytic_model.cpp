#include "analytic_model.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include "trnsim/huge_pages.hpp"
#include "trnsim/net/flat_index.hpp"

namespace trnsim::net {

AnalyticModel::AnalyticModel(NetworkContext& context)
    : context_(context),
      group_sets_(context, tally_, set_tally_) {
  // Per-link arrays (at 65,536 chips 7 MB each): on huge pages (huge_pages.hpp) before zeroing.
  const auto links = static_cast<std::size_t>(context.topology.link_count());
  for (std::vector<double>* v : {&link_bytes_, &tally_.bytes, &set_tally_.bytes}) {
    reserve_huge(*v, links);
    v->assign(links, 0.0);
  }
}

void AnalyticModel::start(const Collective& c, sim::InlineHandler&& done) {
  const AnalyticResult* r = cache_.find(c);
  if (r == nullptr) r = &cache_.insert(c, result(context_.schedule(c)));
  for (const auto& [link, bytes] : r->link_bytes) link_bytes_[static_cast<std::size_t>(link)] += bytes;
  if (aside_) {
    for (const auto& [link, bytes] : r->link_bytes) aside_bytes_[static_cast<std::size_t>(link)] += bytes;
  }
  context_.engine.schedule_in(r->time, std::move(done));
}

void AnalyticModel::start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler&& done) {
  Router& router = context_.router;
  const Route& r = router.path(src_rank, dst_rank);
  for (LinkId l : router.links(r)) link_bytes_[static_cast<std::size_t>(l)] += bytes;
  if (aside_) {
    for (LinkId l : router.links(r)) aside_bytes_[static_cast<std::size_t>(l)] += bytes;
  }
  context_.engine.schedule_in(context_.transfer_time(r, bytes), std::move(done));
}

void AnalyticModel::start_group_set(const Collective& c, ReplicaSetId set, sim::InlineHandler&& done) {
  SetCall& call = group_set_call(c, set);
  ++call.calls;
  call.aside += aside_ ? 1 : 0;
  settled_ = false;
  context_.engine.schedule_in(call.result.time, std::move(done));
}

void AnalyticModel::start_pair_set(ReplicaSetId set, double bytes, sim::InlineHandler&& done) {
  SetCall& call = pair_set_call(set, bytes);
  ++call.calls;
  call.aside += aside_ ? 1 : 0;
  settled_ = false;
  context_.engine.schedule_in(call.result.time, std::move(done));
}

LinkTotals AnalyticModel::link_totals(LinkId l) const {
  LinkTotals t;
  link_totals_range(l, std::span<LinkTotals>(&t, 1));
  return t;
}

bool AnalyticModel::set_aside(bool on) {
  if (on && aside_bytes_.empty()) {
    reserve_huge(aside_bytes_, link_bytes_.size());
    aside_bytes_.assign(link_bytes_.size(), 0.0);
  }
  aside_ = on;
  return true;
}

void AnalyticModel::link_totals_range(LinkId first, std::span<LinkTotals> out) const {
  totals_range(first, out, false);
}

void AnalyticModel::link_totals_range_without_aside(LinkId first, std::span<LinkTotals> out) const {
  totals_range(first, out, true);
}

void AnalyticModel::totals_range(LinkId first, std::span<LinkTotals> out, bool without_aside) const {
  if (!settled_ || settled_without_aside_ != without_aside) settle(without_aside);
  const Topology& topo = context_.topology;
  const auto at = static_cast<std::size_t>(first);
  const bool aside = without_aside && !aside_bytes_.empty();
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double own = aside ? link_bytes_[at + i] - aside_bytes_[at + i] : link_bytes_[at + i];
    const double bytes = set_bytes_.empty() ? own : own + set_bytes_[at + i];
    out[i] = {bytes, bytes / topo.link(static_cast<LinkId>(at + i)).bandwidth};
  }
}

void AnalyticModel::settle(bool without_aside) const {
  reserve_huge(set_bytes_, link_bytes_.size());
  set_bytes_.assign(link_bytes_.size(), 0.0);
  for (const SetCall& call : set_calls_) {
    // Counts, not bytes, are set aside: what is left is a sum of the other calls' bytes, not a
    // difference of sums.
    const auto n = static_cast<double>(without_aside ? call.calls - call.aside : call.calls);
    for (const auto& [link, bytes] : call.result.link_bytes) set_bytes_[static_cast<std::size_t>(link)] += n * bytes;
  }
  settled_ = true;
  settled_without_aside_ = without_aside;
}

AnalyticResult AnalyticModel::result(const Schedule& s) {
  const Topology& topo = context_.topology;
  Router& router = context_.router;
  for (const Phase& p : s.phases) {
    for (const Transfer& t : p.transfers) {
      const double b = t.bytes * p.repeats;
      for (LinkId l : router.links(router.path(t.src, t.dst))) tally_.add(l, b);
      // A reduction reads the receiver's own operand through its chip's DMA link.
      if (p.reduce) tally_.add(topo.dma_link(t.dst), b);
    }
  }
  AnalyticResult r;
  r.time = context_.closed_form.estimate(s);
  r.link_bytes = tally_.take();
  return r;
}

AnalyticModel::SetCall& AnalyticModel::group_set_call(const Collective& c, ReplicaSetId set) {
  const SetKey key{set, false, c.op, c.algorithm, c.bytes};
  if (SetCall* call = find_set_call(key)) return *call;
  return add_set_call(key, group_sets_.price(c, set));
}

AnalyticModel::SetCall& AnalyticModel::pair_set_call(ReplicaSetId set, double bytes) {
  const SetKey key{set, true, CollectiveOp::AllReduce, Algorithm::Auto, bytes};
  if (SetCall* call = find_set_call(key)) return *call;
  Router& router = context_.router;
  const UnitTranslation& translation = router.translation();
  // The images of the set's pairs (each moved back into unit 0, by whole Clos periods, and to core
  // 0 where it can be), each routed, timed and its links' ranges (UnitTranslation::range_of) found
  // once per call: at 65,536 chips a set of 16,384 pairs has about 4,000 images. A set lists the
  // pairs of one chip pair's cores side by side, so the last image is checked before the index.
  struct Image {
    Route route;  // a copy: the router's list of routes may move
    sim::Time time;
    int period = 0;           // its route's (UnitTranslation::period_of)
    std::uint32_t ranges = 0;  // its links' ranges: ranges[this, + route.hops)
  };
  std::vector<Image> images;
  std::vector<std::int8_t> ranges;
  FlatIndex index;
  std::uint64_t last_key = FlatIndex::kEmpty;
  std::uint32_t last = 0;
  const auto image = [&](int src, int dst) -> std::uint32_t {
    const std::uint64_t k = pair_key(src, dst);
    if (k == last_key) return last;
    last_key = k;
    if (const std::uint32_t* known = index.find(k)) return last = *known;
    Image im{router.path(src, dst), {}, 0, static_cast<std::uint32_t>(ranges.size())};
    im.time = context_.transfer_time(im.route, bytes);
    const auto links = router.links(im.route);
    im.period = translation.period_of(links);
    for (const LinkId l : links) ranges.push_back(static_cast<std::int8_t>(translation.range_of(l)));
    last = static_cast<std::uint32_t>(images.size());
    index.insert(k, last);
    images.push_back(im);
    return last;
  };
  int moved_units = 0;
  UnitTranslation::Mover move = translation.mover(0);
  AnalyticResult all;
  for (const auto& [src, dst] : context_.pair_sets[set]) {
    // The pair's route is the image of its image's, with the same links' figures, so the same
    // time; its links are the images of that route's. Every pair adds the same bytes, so the
    // order in which links receive them changes no sum.
    const std::array<int, 2> ranks{src, dst};
    auto [units, cores] = translation.offset_of(ranks);
    const int moved = units * translation.ranks_per_unit + cores;
    std::uint32_t at = image(src - moved, dst - moved);
    if (units > 0 && (images[at].period == 0 || units % images[at].period != 0)) {
      units = 0;  // a link of the image has no image `units` on: the core shift alone
      at = image(src - cores, dst - cores);
    }
    const Image& im = images[at];
    all.time = std::max(all.time, im.time);
    const auto links = router.links(im.route);
    if (units == 0) {
      for (const LinkId l : links) set_tally_.add(translation.image(l, 0, cores), bytes);
      continue;
    }
    if (units != moved_units) {
      moved_units = units;
      move = translation.mover(units);
    }
    for (std::size_t i = 0; i < links.size(); ++i) set_tally_.add(move.at(links[i], ranges[im.ranges + i], cores), bytes);
  }
  all.link_bytes = set_tally_.take();
  return add_set_call(key, std::move(all));
}

AnalyticModel::SetCall* AnalyticModel::find_set_call(const SetKey& key) {
  const auto it = set_index_.find(key);
  return it == set_index_.end() ? nullptr : &set_calls_[it->second];
}

AnalyticModel::SetCall& AnalyticModel::add_set_call(const SetKey& key, AnalyticResult r) {
  set_index_.emplace(key, static_cast<std::uint32_t>(set_calls_.size()));
  return set_calls_.emplace_back(SetCall{std::move(r), 0});
}

std::size_t AnalyticModel::SetKeyHash::operator()(const SetKey& k) const {
  // FNV-1a over the fields; only used to find equal keys, never to order anything.
  std::uint64_t h = 1469598103934665603ULL;
  for (const std::uint64_t v : {static_cast<std::uint64_t>(k.set), static_cast<std::uint64_t>(k.pairs),
                                static_cast<std::uint64_t>(k.op), static_cast<std::uint64_t>(k.algorithm),
                                std::bit_cast<std::uint64_t>(k.bytes)}) {
    h ^= v;
    h *= 1099511628211ULL;
  }
  return static_cast<std::size_t>(h);
}

}  // namespace trnsim::net
