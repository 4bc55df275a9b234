#pragma once
// Net-internal: the analytic network model. Each call completes after its closed-form time
// (closed_form.hpp), computed once per distinct call; calls do not see each other. Link figures:
// every byte a call's schedule sends is credited to the links of its route, and every byte a
// reduction reads to the receiver's DMA link; busy time is bytes / bandwidth.
//
// Replicas collapse: a call on a registered set of groups (or pairs) is one engine event at the
// slowest group's closed-form time, which is when the last of one call per group would complete.
// Each distinct (set, op, algorithm, bytes) is computed once, with the bytes all its groups put on
// each link; later calls only count, and the counts become link bytes when the figures are read.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "group_set_pricing.hpp"
#include "link_tally.hpp"
#include "network_model.hpp"
#include "trnsim/net/analytic_cache.hpp"

namespace trnsim::net {

class AnalyticModel final : public NetworkModel {
 public:
  explicit AnalyticModel(NetworkContext& context);
  // Its group-set pricing borrows its tallies by reference: a copy or a move would leave them
  // pointing at the original's.
  AnalyticModel(const AnalyticModel&) = delete;
  AnalyticModel& operator=(const AnalyticModel&) = delete;

  // Contract: O(1) after the first call of each distinct collective (a cache lookup, the per-link
  // credits, one engine event); the first call costs the closed form and one pass over its schedule.
  void start(const Collective& c, sim::InlineHandler&& done) override;
  // Contract: O(route hops), cached routes.
  void start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler&& done) override;
  bool collapses_replicas() const override { return true; }
  // Contract: O(1) after the first call of each distinct (set, op, algorithm, bytes): a lookup, a
  // count and one engine event; the first costs one closed form and schedule pass per group.
  void start_group_set(const Collective& c, ReplicaSetId set, sim::InlineHandler&& done) override;
  // Contract: O(1) after the first call of each distinct (set, bytes); the first is O(route hops)
  // per pair. A pair inside a later unit, or on later cores of its chips, is routed as its image
  // in unit 0 and core 0 (unit_translation.hpp), as GroupSetPricing routes groups: at 65,536
  // chips with pipeline stages inside an UltraServer that left a tenth of a run's routing.
  void start_pair_set(ReplicaSetId set, double bytes, sim::InlineHandler&& done) override;
  LinkTotals link_totals(LinkId l) const override;
  void link_totals_range(LinkId first, std::span<LinkTotals> out) const override;
  // Contract: true. A call set aside also adds its bytes to a second per-link array (allocated
  // at the first, for the replays that set calls aside) or counts in its set call's `aside`.
  bool set_aside(bool on) override;
  void link_totals_range_without_aside(LinkId first, std::span<LinkTotals> out) const override;
  // Contract: GroupSetPricing::time_of(c), the closed form's estimate to the picosecond.
  std::optional<sim::Time> expected(const Collective& c) override { return group_sets_.time_of(c); }
  NetworkCounters counters() const override { return {}; }

 private:
  // A distinct call on a replica set: the slowest group's time, the bytes one call of all its
  // groups puts on each link, and how many times it was started.
  struct SetCall {
    AnalyticResult result;
    std::uint64_t calls = 0;
    std::uint64_t aside = 0;  // of them, set aside
  };
  struct SetKey {
    ReplicaSetId set;
    bool pairs;  // a pair set (op and algorithm unused) or a group set
    CollectiveOp op;
    Algorithm algorithm;
    double bytes;
    bool operator==(const SetKey&) const = default;
  };
  struct SetKeyHash {
    std::size_t operator()(const SetKey& k) const;
  };

  AnalyticResult result(const Schedule& s);  // time and per-link bytes, for the cache
  SetCall& group_set_call(const Collective& c, ReplicaSetId set);
  SetCall& pair_set_call(ReplicaSetId set, double bytes);
  SetCall* find_set_call(const SetKey& key);
  SetCall& add_set_call(const SetKey& key, AnalyticResult r);
  // set_bytes_ from the set calls' counts (without_aside: less those set aside).
  void settle(bool without_aside) const;
  void totals_range(LinkId first, std::span<LinkTotals> out, bool without_aside) const;

  NetworkContext& context_;
  AnalyticCache cache_;              // one result per distinct collective
  std::vector<double> link_bytes_;  // per link, carried so far by start() and start_transfer()
  std::vector<double> aside_bytes_;  // the part of link_bytes_ set aside (empty until a call is)
  bool aside_ = false;
  LinkTally tally_, set_tally_;     // scratch for result() and for a pair set's pairs, lent to group_sets_
  GroupSetPricing group_sets_;      // the first call of each distinct (group set, op, algorithm, size)
  std::unordered_map<SetKey, std::uint32_t, SetKeyHash> set_index_;  // into set_calls_
  std::vector<SetCall> set_calls_;  // in order of first call: the order settle() credits them in
  mutable std::vector<double> set_bytes_;  // per link, carried by set calls (settle())
  mutable bool settled_ = true;
  mutable bool settled_without_aside_ = false;  // which counts set_bytes_ holds
};

}  // namespace trnsim::net
