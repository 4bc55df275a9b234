#include "group_set_pricing.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/core.h>

#include "trnsim/error.hpp"

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

}  // namespace

std::size_t GroupSetPricing::SizedKeyHash::operator()(const SizedKey& k) const {
  return static_cast<std::size_t>((static_cast<std::uint64_t>(k.shape) * 1099511628211ULL) ^ k.bytes);
}

GroupSetPricing::GroupSetPricing(NetworkContext& context) : context_(context) {
  const auto links = static_cast<std::size_t>(context.topology.link_count());
  group_tally_.bytes.assign(links, 0.0);
  set_tally_.bytes.assign(links, 0.0);
}

Collective GroupSetPricing::group_call(const Collective& c, ReplicaSetId set, std::size_t g) const {
  const GroupSet& groups = context_.group_sets[set];
  const auto first = groups.ranks.begin() + static_cast<std::ptrdiff_t>(g * static_cast<std::size_t>(groups.group_size));
  return Collective{c.op, std::vector<int>(first, first + groups.group_size), c.bytes, c.algorithm};
}

AnalyticResult GroupSetPricing::price(const Collective& c, ReplicaSetId set) {
  const GroupSet& groups = context_.group_sets[set];
  const Router& router = context_.router;
  AnalyticResult all;
  for (std::size_t g = 0; g < groups.count(); ++g) {
    const Collective group = group_call(c, set, g);
    const Algorithm a = context_.closed_form.choose(group);
    const GroupPlan& plan = plans_[plan_of(group, a, set, g)];
    const Sized& size = sized(plan.shape, c, a);
    all.time = std::max(all.time, size.time);
    // The group's link bytes summed on their own first, as AnalyticModel::result credits them.
    for (std::uint32_t i = 0; i < plan.count; ++i) {
      const TransferTerms& t = terms_[plan.first + i];
      const double b = size.bytes[i];
      for (LinkId l : router.links(t.route)) group_tally_.add(l, b);
      if (t.reduce_link >= 0) group_tally_.add(t.reduce_link, b);
    }
    for (const auto& [link, bytes] : group_tally_.take()) set_tally_.add(link, bytes);
  }
  all.link_bytes = set_tally_.take();
  return all;
}

std::uint32_t GroupSetPricing::plan_of(const Collective& group, Algorithm a, ReplicaSetId set, std::size_t g) {
  const std::uint64_t key = (static_cast<std::uint64_t>(set) << 16) | (static_cast<std::uint64_t>(group.op) << 8) |
                            static_cast<std::uint64_t>(a);
  std::vector<std::uint32_t>& per_group = plan_index_[key];
  if (per_group.empty()) per_group.assign(context_.group_sets[set].count(), 0);
  if (per_group[g] != 0) return per_group[g] - 1;
  const Schedule s = make_schedule(group, a, context_.topology.cluster(), context_.topology.devices());
  GroupPlan plan;
  plan.first = static_cast<std::uint32_t>(terms_.size());
  for (const Phase& p : s.phases) context_.closed_form.phase_terms(p, terms_);
  plan.count = static_cast<std::uint32_t>(terms_.size()) - plan.first;
  const auto id = static_cast<std::uint32_t>(plans_.size());
  plan.shape = shape_of(group_shape_key(group, s, {terms_.data() + plan.first, plan.count}), set, g, id);
  plans_.push_back(plan);
  per_group[g] = id + 1;
  return id;
}

std::uint32_t GroupSetPricing::shape_of(std::vector<double> key, ReplicaSetId set, std::size_t g, std::uint32_t plan) {
  std::vector<std::uint32_t>& alike = shape_index_[fnv(key)];
  for (const std::uint32_t s : alike) {
    // Compared as bits: a NaN-free key, and -0.0 never arises in rates, latencies or sizes.
    if (shapes_[s].key.size() == key.size() &&
        std::memcmp(shapes_[s].key.data(), key.data(), key.size() * sizeof(double)) == 0)
      return s;
  }
  const auto id = static_cast<std::uint32_t>(shapes_.size());
  shapes_.push_back({std::move(key), set, static_cast<std::uint32_t>(g), plan});
  alike.push_back(id);
  return id;
}

const GroupSetPricing::Sized& GroupSetPricing::sized(std::uint32_t shape, const Collective& c, Algorithm a) {
  const SizedKey key{shape, std::bit_cast<std::uint64_t>(c.bytes)};
  if (const auto it = sized_index_.find(key); it != sized_index_.end()) return sized_[it->second];
  const Shape& sh = shapes_[shape];
  const Collective first = group_call(c, sh.set, sh.group);
  const Schedule s = make_schedule(first, a, context_.topology.cluster(), context_.topology.devices());
  // The shape's first group at this size: the closed form's estimate(s), step by step from the
  // terms kept for it (the same arithmetic), and each transfer's bytes over its steps.
  const GroupPlan& plan = plans_[sh.plan];
  Sized out;
  out.time = sim::Time::seconds(context_.topology.cluster().instance.calibration.collective_launch_s);
  out.bytes.reserve(plan.count);
  std::uint32_t at = plan.first;
  for (const Phase& p : s.phases) {
    if (at + p.transfers.size() > plan.first + plan.count) break;
    const sim::Time step = context_.closed_form.step_time(p, {terms_.data() + at, p.transfers.size()});
    out.time += sim::Time::ps(step.picoseconds() * p.repeats);
    for (const Transfer& t : p.transfers) out.bytes.push_back(t.bytes * p.repeats);
    at += static_cast<std::uint32_t>(p.transfers.size());
  }
  if (out.bytes.size() != plan.count) {
    throw InternalError(fmt::format("analytic model: {} on {} ranks has {} transfers at {} bytes, {} at the size it "
                                    "was first scheduled at",
                                    to_string(c.op), first.ranks.size(), out.bytes.size(), c.bytes, plan.count));
  }
  sized_index_.emplace(key, static_cast<std::uint32_t>(sized_.size()));
  sized_.push_back(std::move(out));
  return sized_.back();
}

}  // namespace trnsim::net
