#include "group_set_pricing.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <span>

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/huge_pages.hpp"
#include "trnsim/net/analytic_cache.hpp"
#include "trnsim/net/fabric.hpp"

namespace trnsim::net {
namespace {

// FNV-1a over 64-bit words; only used to find equal keys, never to order anything.
std::uint64_t fnv(std::span<const double> words) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const double w : words) {
    h ^= std::bit_cast<std::uint64_t>(w);
    h *= 1099511628211ULL;
  }
  return h;
}

// What the time of a group's schedule depends on, flattened: the call's op, algorithm, group
// size and size; per step its repeats, reduction and transfers; per transfer its terms and bytes.
std::vector<double> group_shape_key(const Collective& group, const Schedule& s, std::span<const TransferTerms> terms) {
  std::vector<double> key{static_cast<double>(group.op), static_cast<double>(s.algorithm),
                          static_cast<double>(group.ranks.size()), group.bytes};
  std::size_t i = 0;
  for (const Phase& p : s.phases) {
    key.insert(key.end(), {static_cast<double>(p.repeats), p.reduce ? 1.0 : 0.0, static_cast<double>(p.transfers.size())});
    for (const Transfer& t : p.transfers) {
      const TransferTerms& x = terms[i++];
      key.insert(key.end(), {x.rate, x.reduce_rate, static_cast<double>(x.messages), x.route.latency, t.bytes});
    }
  }
  return key;
}

GroupTerms& terms_of(Fabric& fabric) {
  if (!fabric.group_terms) fabric.group_terms = std::make_unique<GroupTerms>();
  return *fabric.group_terms;
}

}  // namespace

std::size_t GroupTerms::SizedKeyHash::operator()(const SizedKey& k) const {
  return static_cast<std::size_t>((static_cast<std::uint64_t>(k.shape) * 1099511628211ULL) ^ k.bytes);
}

GroupSetPricing::GroupSetPricing(NetworkContext& context, LinkTally& group_tally, LinkTally& set_tally)
    : context_(context), shared_(terms_of(*context.fabric)), group_tally_(group_tally), set_tally_(set_tally) {}

Collective GroupSetPricing::group_call(const Collective& c, ReplicaSetId set, std::size_t g) const {
  const GroupSet& groups = context_.group_sets[set];
  const auto first = groups.ranks.begin() + static_cast<std::ptrdiff_t>(g * static_cast<std::size_t>(groups.group_size));
  return Collective{c.op, std::vector<int>(first, first + groups.group_size), c.bytes, c.algorithm};
}

AnalyticResult GroupSetPricing::price(const Collective& c, ReplicaSetId set) {
  const GroupSet& groups = context_.group_sets[set];
  const UnitTranslation& translation = context_.router.translation();
  const SetImages& images = images_of(set);
  AnalyticResult all;
  image_bytes_.clear();
  chosen_.assign(images.ranks.size(), Algorithm::Auto);
  for (std::size_t g = 0; g < groups.count(); ++g) {
    const std::uint32_t at = images.of_group[g];
    if (chosen_[at] == Algorithm::Auto) {
      chosen_[at] = context_.closed_form.choose(Collective{c.op, images.ranks[at], c.bytes, c.algorithm});
    }
    const Algorithm a = chosen_[at];
    const GroupRef ref = plan_of(c, a, set, g, at);
    const GroupTerms::GroupPlan& plan = shared_.plans[ref.plan - 1];
    const GroupTerms::Sized& size = sized(plan.shape, c, a);
    all.time = std::max(all.time, size.time);
    // The group's link bytes summed on their own first, as AnalyticModel::result credits them;
    // a translated group's are its image's, link by link (each link once: the order of the list
    // changes no sum).
    if (ref.units == 0 && ref.cores == 0) {
      for (const auto& [link, bytes] : group_bytes(plan, size)) set_tally_.add(link, bytes);
      continue;
    }
    auto image = std::find_if(image_bytes_.begin(), image_bytes_.end(),
                              [&](const ImageBytes& known) { return known.plan == ref.plan; });
    if (image == image_bytes_.end()) {
      ImageBytes& added = image_bytes_.emplace_back(ImageBytes{ref.plan, group_bytes(plan, size), {}});
      added.ranges.reserve(added.bytes.size());
      for (const auto& [link, bytes] : added.bytes) added.ranges.push_back(static_cast<std::int8_t>(translation.range_of(link)));
      image = image_bytes_.end() - 1;
    }
    const UnitTranslation::Mover move = translation.mover(ref.units);
    for (std::size_t i = 0; i < image->bytes.size(); ++i) {
      set_tally_.add(move.at(image->bytes[i].first, image->ranges[i], ref.cores), image->bytes[i].second);
    }
  }
  all.link_bytes = set_tally_.take();
  return all;
}

sim::Time GroupSetPricing::time_of(const Collective& c) {
  const Algorithm a = context_.closed_form.choose(c);
  const std::uint32_t shape = shared_.plans[image_plan(c, a).plan - 1].shape;
  return sized(shape, c, a).time;
}

GroupSetPricing::LinkBytes GroupSetPricing::group_bytes(const GroupTerms::GroupPlan& plan, const GroupTerms::Sized& size) {
  const Router& router = context_.router;
  for (std::uint32_t i = 0; i < plan.count; ++i) {
    const TransferTerms& t = shared_.terms[plan.first + i];
    const double b = size.bytes[i];
    for (LinkId l : router.links(t.route)) group_tally_.add(l, b);
    if (t.reduce_link >= 0) group_tally_.add(t.reduce_link, b);
  }
  return group_tally_.take();
}

const GroupSetPricing::SetImages& GroupSetPricing::images_of(ReplicaSetId set) {
  SetImages& out = set_images_[set];
  const GroupSet& groups = context_.group_sets[set];
  if (!out.of_group.empty() || groups.count() == 0) return out;
  const UnitTranslation& translation = context_.router.translation();
  const auto size = static_cast<std::size_t>(groups.group_size);
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> index;  // FNV-1a of the ranks -> images
  out.of_group.reserve(groups.count());
  out.offset.reserve(groups.count());
  for (std::size_t g = 0; g < groups.count(); ++g) {
    const std::span<const int> ranks(groups.ranks.data() + g * size, size);
    const UnitTranslation::Offset o = translation.offset_of(ranks);
    const int moved = o.units * translation.ranks_per_unit + o.cores;
    image_ranks_.assign(ranks.begin(), ranks.end());
    std::uint64_t h = 1469598103934665603ULL;
    for (int& r : image_ranks_) {
      r -= moved;
      h = (h ^ static_cast<std::uint32_t>(r)) * 1099511628211ULL;
    }
    std::vector<std::uint32_t>& alike = index[h];
    auto known = std::find_if(alike.begin(), alike.end(), [&](std::uint32_t k) { return out.ranks[k] == image_ranks_; });
    if (known == alike.end()) {
      alike.push_back(static_cast<std::uint32_t>(out.ranks.size()));
      out.ranks.push_back(image_ranks_);
      known = alike.end() - 1;
    }
    out.of_group.push_back(*known);
    out.offset.push_back(o);
  }
  return out;
}

GroupSetPricing::GroupRef GroupSetPricing::plan_of(const Collective& c, Algorithm a, ReplicaSetId set, std::size_t g,
                                                   std::uint32_t image) {
  const std::uint64_t key = (static_cast<std::uint64_t>(set) << 16) | (static_cast<std::uint64_t>(c.op) << 8) |
                            static_cast<std::uint64_t>(a);
  std::vector<GroupRef>& per_group = plan_index_[key];
  if (per_group.empty()) per_group.assign(context_.group_sets[set].count(), GroupRef{});
  if (per_group[g].plan != 0) return per_group[g];
  const SetImages& images = set_images_.at(set);
  std::vector<std::uint32_t>& per_image = image_plan_index_[key];
  if (per_image.empty()) per_image.assign(images.ranks.size(), 0);
  if (per_image[image] == 0) per_image[image] = find_or_schedule(Collective{c.op, images.ranks[image], c.bytes, c.algorithm}, a) + 1;
  const UnitTranslation::Offset o = images.offset[g];
  const int period = shared_.plans[per_image[image] - 1].period;
  if (o.units == 0 || (period > 0 && o.units % period == 0)) {
    per_group[g] = GroupRef{per_image[image], o.units, o.cores};
  } else {
    per_group[g] = image_plan(group_call(c, set, g), a);  // a link of the image has no image `units` on
  }
  return per_group[g];
}

GroupSetPricing::GroupRef GroupSetPricing::image_plan(const Collective& group, Algorithm a) {
  // The group moved back into unit 0 (if it lies inside a later one), by whole Clos periods (if it
  // spans units), and to core 0 of its chips.
  const UnitTranslation& translation = context_.router.translation();
  auto [units, cores] = translation.offset_of(group.ranks);
  for (int attempt = 0; attempt < 2 && (units > 0 || cores > 0); ++attempt) {
    image_ranks_.assign(group.ranks.begin(), group.ranks.end());
    for (int& r : image_ranks_) r -= units * translation.ranks_per_unit + cores;
    const std::uint32_t image = find_or_schedule(Collective{group.op, image_ranks_, group.bytes, group.algorithm}, a);
    const int period = shared_.plans[image].period;
    if (units == 0 || (period > 0 && units % period == 0)) return GroupRef{image + 1, units, cores};
    units = 0;  // a link of the image has no image `units` on: the core shift alone
  }
  return GroupRef{find_or_schedule(group, a) + 1, 0, 0};
}

std::uint32_t GroupSetPricing::find_or_schedule(const Collective& group, Algorithm a) {
  // The same ranks, op and algorithm scheduled before on this fabric (by this plan or an earlier one).
  std::vector<std::uint32_t>& alike = shared_.plan_index[hash_key(CollectiveKeyView{group.op, a, 0.0, group.ranks})];
  for (const std::uint32_t p : alike) {
    const GroupTerms::GroupPlan& known = shared_.plans[p];
    if (known.op == group.op && known.algorithm == a && known.ranks == group.ranks) return p;
  }
  const Schedule s = make_schedule(group, a, context_.topology.cluster(), context_.topology.devices());
  GroupTerms::GroupPlan plan;
  plan.op = group.op;
  plan.algorithm = a;
  plan.ranks = group.ranks;
  plan.first = static_cast<std::uint32_t>(shared_.terms.size());
  std::size_t transfers = 0;
  for (const Phase& p : s.phases) transfers += p.transfers.size();
  grow_huge(shared_.terms, transfers);  // millions of terms at 65,536 chips: on huge pages
  for (const Phase& p : s.phases) context_.closed_form.phase_terms(p, shared_.terms);
  plan.count = static_cast<std::uint32_t>(shared_.terms.size()) - plan.first;
  const std::span<const TransferTerms> terms{shared_.terms.data() + plan.first, plan.count};
  const UnitTranslation& translation = context_.router.translation();
  const Router& router = context_.router;
  // Its period: the largest of its links' (1 or the Clos's), 0 once one does not translate.
  plan.period = translation.units > 0 ? 1 : 0;
  for (std::size_t i = 0; i < terms.size() && plan.period > 0; ++i) {
    const int route = translation.period_of(router.links(terms[i].route));
    const int reduce = terms[i].reduce_link < 0 ? 1 : translation.period(terms[i].reduce_link);
    plan.period = route == 0 || reduce == 0 ? 0 : std::max({plan.period, route, reduce});
  }
  const auto id = static_cast<std::uint32_t>(shared_.plans.size());
  plan.shape = shape_of(group_shape_key(group, s, terms), id);
  shared_.plans.push_back(std::move(plan));
  alike.push_back(id);
  return id;
}

std::uint32_t GroupSetPricing::shape_of(std::vector<double> key, std::uint32_t plan) {
  std::vector<std::uint32_t>& alike = shared_.shape_index[fnv(key)];
  for (const std::uint32_t s : alike) {
    // Compared as bits: a NaN-free key, and -0.0 never arises in rates, latencies or sizes.
    if (shared_.shapes[s].key.size() == key.size() &&
        std::memcmp(shared_.shapes[s].key.data(), key.data(), key.size() * sizeof(double)) == 0)
      return s;
  }
  const auto id = static_cast<std::uint32_t>(shared_.shapes.size());
  shared_.shapes.push_back({std::move(key), plan});
  alike.push_back(id);
  return id;
}

const GroupTerms::Sized& GroupSetPricing::sized(std::uint32_t shape, const Collective& c, Algorithm a) {
  const GroupTerms::SizedKey key{shape, std::bit_cast<std::uint64_t>(c.bytes)};
  if (const auto it = shared_.sized_index.find(key); it != shared_.sized_index.end()) return shared_.sized[it->second];
  const GroupTerms::GroupPlan& plan = shared_.plans[shared_.shapes[shape].plan];
  const Collective first{c.op, plan.ranks, c.bytes, c.algorithm};
  const Schedule s = make_schedule(first, a, context_.topology.cluster(), context_.topology.devices());
  // The shape's first group at this size: the closed form's estimate(s), step by step from the
  // terms kept for it (the same arithmetic), and each transfer's bytes over its steps.
  GroupTerms::Sized out;
  out.time = sim::Time::seconds(context_.topology.cluster().instance.calibration.collective_launch_s);
  out.bytes.reserve(plan.count);
  std::uint32_t at = plan.first;
  for (const Phase& p : s.phases) {
    if (at + p.transfers.size() > plan.first + plan.count) break;
    const sim::Time step = context_.closed_form.step_time(p, {shared_.terms.data() + at, p.transfers.size()});
    out.time += sim::Time::ps(step.picoseconds() * p.repeats);
    for (const Transfer& t : p.transfers) out.bytes.push_back(t.bytes * p.repeats);
    at += static_cast<std::uint32_t>(p.transfers.size());
  }
  if (out.bytes.size() != plan.count) {
    throw InternalError(fmt::format("analytic model: {} on {} ranks has {} transfers at {} bytes, {} at the size it "
                                    "was first scheduled at",
                                    to_string(c.op), first.ranks.size(), out.bytes.size(), c.bytes, plan.count));
  }
  shared_.sized_index.emplace(key, static_cast<std::uint32_t>(shared_.sized.size()));
  shared_.sized.push_back(std::move(out));
  return shared_.sized.back();
}

}  // namespace trnsim::net
