#pragma once
// Net-internal: the analytic model's price of one call on every group of a replica set (its time:
// the slowest group's closed form; its link bytes: every group's schedule on its routes), without
// redoing per size what does not depend on size.
//
// A group's schedule under one algorithm has the same transfers at every size, only their bytes
// change; its routes and the bandwidth shares its steps leave each transfer (TransferTerms) are
// computed once per (set, group, op, algorithm). Groups whose schedules have the same shape (the
// same steps, and per transfer the same terms and bytes) take the same time at every size, so the
// time of a size is computed once per shape, on the shape's first group. The premise: an
// algorithm's transfer sizes depend only on the call's size and the schedule's shape (ranks per
// ring, instance, row), so equal shapes at one size are equal at every size.
//
// The result is what one closed form and link tally per group give (AnalyticModel::result), to
// the picosecond and, link by link, in the same order of additions.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trnsim/net/analytic_cache.hpp"
#include "trnsim/net/closed_form.hpp"
#include "link_tally.hpp"
#include "network_model.hpp"

namespace trnsim::net {

class GroupSetPricing {
 public:
  explicit GroupSetPricing(NetworkContext& context);

  // Contract: `c` on every group of `set` (c.ranks unused). The first call of a (set, group, op,
  // algorithm) schedules and routes that group; later calls cost, per group, the algorithm's
  // choice and a pass over its transfers' links, plus one schedule and closed form per distinct
  // (shape, size). Throws what make_schedule throws (a group the algorithm cannot run).
  AnalyticResult price(const Collective& c, ReplicaSetId set);

 private:
  struct GroupPlan {
    std::uint32_t shape = 0;  // into shapes_
    std::uint32_t first = 0;  // its transfers' terms: terms_[first, first + count), schedule order
    std::uint32_t count = 0;
  };
  struct Shape {
    std::vector<double> key;  // what equality of shapes compares (group_shape_key)
    ReplicaSetId set = 0;     // its first group, which prices it at each size
    std::uint32_t group = 0;
    std::uint32_t plan = 0;
  };
  struct Sized {              // a shape at one size
    sim::Time time;
    std::vector<double> bytes;  // per transfer, schedule order: its bytes x its step's repeats
  };

  Collective group_call(const Collective& c, ReplicaSetId set, std::size_t g) const;
  std::uint32_t plan_of(const Collective& group, Algorithm a, ReplicaSetId set, std::size_t g);
  std::uint32_t shape_of(std::vector<double> key, ReplicaSetId set, std::size_t g, std::uint32_t plan);
  const Sized& sized(std::uint32_t shape, const Collective& c, Algorithm a);

  NetworkContext& context_;
  std::vector<TransferTerms> terms_;  // every plan's transfers
  std::vector<GroupPlan> plans_;
  // (set, op, algorithm) -> per group of the set: its plan + 1 (0: none yet)
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> plan_index_;
  std::vector<Shape> shapes_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> shape_index_;  // key hash -> shapes
  std::vector<Sized> sized_;
  struct SizedKey {
    std::uint32_t shape;
    std::uint64_t bytes;  // the size's bits
    bool operator==(const SizedKey&) const = default;
  };
  struct SizedKeyHash {
    std::size_t operator()(const SizedKey& k) const;
  };
  std::unordered_map<SizedKey, std::uint32_t, SizedKeyHash> sized_index_;
  LinkTally group_tally_, set_tally_;
};

}  // namespace trnsim::net
