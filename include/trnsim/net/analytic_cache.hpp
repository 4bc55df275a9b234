#pragma once
// CollectiveCache: a network model's answer for a collective depends only on (op, algorithm,
// bytes, ranks), so a step that issues the same call thousands of times (every layer, every
// micro-batch) computes its schedule, algorithm choice and per-link figures once.
// AnalyticCache holds the analytic model's answers; the flow model caches a FlowShape per call.
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trnsim/net/collective.hpp"
#include "trnsim/net/topology.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::net {

struct AnalyticResult {
  sim::Time time;
  std::vector<std::pair<LinkId, double>> link_bytes;  // bytes each link carries, each link once
};

// Hash and equality of the cache key; only used to find equal keys, never to order anything.
struct CollectiveKeyView {
  CollectiveOp op;
  Algorithm algorithm;
  double bytes;
  std::span<const int> ranks;
};
std::size_t hash_key(const CollectiveKeyView& k);
bool same_key(const CollectiveKeyView& a, const CollectiveKeyView& b);

template <class Value>
class CollectiveCache {
 public:
  // Contract: the cached value for `c`, or nullptr. O(ranks) to hash and compare; no allocation.
  // Stored values never move (node-based map), so the pointer stays valid.
  const Value* find(const Collective& c) const {
    const auto it = map_.find(view_of(c));
    return it == map_.end() ? nullptr : &it->second;
  }
  // Contract: stores `r` for `c` (copying its ranks) and returns the stored value.
  const Value& insert(const Collective& c, Value r) {
    Key key{c.op, c.algorithm, c.bytes, c.ranks};
    return map_.insert_or_assign(std::move(key), std::move(r)).first->second;
  }
  std::size_t size() const { return map_.size(); }

 private:
  using KeyView = CollectiveKeyView;
  struct Key {
    CollectiveOp op;
    Algorithm algorithm;
    double bytes;
    std::vector<int> ranks;
    KeyView view() const { return {op, algorithm, bytes, ranks}; }
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const { return hash_key(k); }
    std::size_t operator()(const Key& k) const { return (*this)(k.view()); }
  };
  struct Equal {
    using is_transparent = void;
    static bool same(const KeyView& a, const KeyView& b) { return same_key(a, b); }
    bool operator()(const Key& a, const Key& b) const { return same(a.view(), b.view()); }
    bool operator()(const KeyView& a, const Key& b) const { return same(a, b.view()); }
    bool operator()(const Key& a, const KeyView& b) const { return same(a.view(), b); }
  };
  static KeyView view_of(const Collective& c) { return {c.op, c.algorithm, c.bytes, c.ranks}; }
  std::unordered_map<Key, Value, Hash, Equal> map_;
};

using AnalyticCache = CollectiveCache<AnalyticResult>;

}  // namespace trnsim::net
