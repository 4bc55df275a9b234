// Recursive halving-doubling (Thakur, Rabenseifner & Gropp 2005) on n = 2^k ranks, size S:
// reduce-scatter by recursive halving, step j exchanges S/2^(j+1) with the partner at distance 2^j
// (nearest first, so the largest halves stay on the nearest links); all-gather by recursive
// doubling in the reverse order; all-reduce is both (2 log2 n steps). Broadcast: binomial tree,
// step j: position i < 2^j sends S to i + 2^j (any n).
#include "algorithms.hpp"

namespace trnsim::net::algo {

Schedule halving_doubling(const Collective& c, const std::vector<int>& ordered) {
  Schedule s;
  s.algorithm = Algorithm::HalvingDoubling;
  const int n = static_cast<int>(ordered.size());
  auto at = [&](int i) { return ordered[static_cast<std::size_t>(i)]; };
  if (c.op == CollectiveOp::Broadcast) {
    std::vector<int> tree = ordered;  // root first
    for (std::size_t i = 0; i < tree.size(); ++i) {
      if (tree[i] == c.ranks.front()) std::swap(tree[0], tree[i]);
    }
    for (int d = 1; d < n; d *= 2) {
      Phase p;
      for (int i = 0; i < d && i + d < n; ++i) {
        p.transfers.push_back(Transfer{tree[static_cast<std::size_t>(i)], tree[static_cast<std::size_t>(i + d)], c.bytes});
      }
      push_phase(s, std::move(p), 1);
    }
    return s;
  }
  auto exchange = [&](int distance, double bytes, bool reducing) {
    Phase p;
    for (int i = 0; i < n; ++i) p.transfers.push_back(Transfer{at(i), at(i ^ distance), bytes});
    push_phase(s, std::move(p), 1, reducing);
  };
  const bool reduce = c.op == CollectiveOp::AllReduce || c.op == CollectiveOp::ReduceScatter;
  const bool gather = c.op == CollectiveOp::AllReduce || c.op == CollectiveOp::AllGather;
  if (reduce) {
    double bytes = c.bytes / 2;
    for (int d = 1; d < n; d *= 2, bytes /= 2) exchange(d, bytes, true);
  }
  if (gather) {
    double bytes = c.bytes / n;
    for (int d = n / 2; d >= 1; d /= 2, bytes *= 2) exchange(d, bytes, false);
  }
  return s;
}

}  // namespace trnsim::net::algo
