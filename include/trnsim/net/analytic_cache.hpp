#pragma once
// AnalyticCache: the analytic model's answer for a collective depends only on (op, algorithm,
// bytes, ranks), so a step that issues the same call thousands of times (every layer, every
// micro-batch) computes its schedule, algorithm choice and per-link bytes once.
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
  std::vector<std::pair<LinkId, double>> link_bytes;  // bytes each link carries, in link order
};

class AnalyticCache {
 public:
  // Contract: the cached result for `c`, or nullptr. O(ranks) to hash and compare; no allocation.
  const AnalyticResult* find(const Collective& c) const;
  // Contract: stores `r` for `c` (copying its ranks) and returns the stored result.
  const AnalyticResult& insert(const Collective& c, AnalyticResult r);
  std::size_t size() const { return map_.size(); }

 private:
  struct KeyView {
    CollectiveOp op;
    Algorithm algorithm;
    double bytes;
    std::span<const int> ranks;
  };
  struct Key {
    CollectiveOp op;
    Algorithm algorithm;
    double bytes;
    std::vector<int> ranks;
    KeyView view() const { return {op, algorithm, bytes, ranks}; }
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const;
    std::size_t operator()(const Key& k) const { return (*this)(k.view()); }
  };
  struct Equal {
    using is_transparent = void;
    static bool same(const KeyView& a, const KeyView& b);
    bool operator()(const Key& a, const Key& b) const { return same(a.view(), b.view()); }
    bool operator()(const KeyView& a, const Key& b) const { return same(a, b.view()); }
    bool operator()(const Key& a, const KeyView& b) const { return same(a.view(), b); }
  };
  static KeyView view_of(const Collective& c) { return {c.op, c.algorithm, c.bytes, c.ranks}; }
  std::unordered_map<Key, AnalyticResult, Hash, Equal> map_;
};

}  // namespace trnsim::net
