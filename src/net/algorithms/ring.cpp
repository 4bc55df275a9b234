// Ring algorithms (Patarasuk & Yuan's bandwidth-optimal ring; NCCL's ring). n ranks, size S:
// all-reduce 2(n-1) steps of S/n (n-1 reducing, then n-1 gathering), reduce-scatter (reducing)
// and all-gather n-1 steps of S/n; the
// bidirectional ring runs two rings in opposite directions with half the data each. Broadcast is a
// pipelined chain from the root cut into n chunks: 2n-2 steps of S/n.
#include <algorithm>

#include "algorithms.hpp"

namespace trnsim::net::algo {

void add_ring_step(Phase& phase, const std::vector<int>& ring, double bytes, bool both_ways) {
  const std::size_t n = ring.size();
  if (n < 2) return;
  for (std::size_t i = 0; i < n; ++i) {
    phase.transfers.push_back(Transfer{ring[i], ring[(i + 1) % n], bytes});
    if (both_ways && n > 2) phase.transfers.push_back(Transfer{ring[i], ring[(i + n - 1) % n], bytes});
  }
}

void push_phase(Schedule& s, Phase&& p, int repeats, bool reduce) {
  if (repeats < 1 || p.transfers.empty()) return;
  p.repeats = repeats;
  p.reduce = reduce;
  s.phases.push_back(std::move(p));
}

Schedule ring(const Collective& c, const std::vector<int>& ordered, bool bidirectional) {
  Schedule s;
  s.algorithm = bidirectional ? Algorithm::BidirectionalRing : Algorithm::Ring;
  const int n = static_cast<int>(ordered.size());
  if (n < 2) return s;
  const double chunk = c.bytes / n;
  if (c.op == CollectiveOp::Broadcast) {
    // Chain 0 -> 1 -> ... -> n-1 from the root; chunk j leaves position i at step i + j.
    std::vector<int> chain = ordered;
    std::rotate(chain.begin(), std::find(chain.begin(), chain.end(), c.ranks.front()), chain.end());
    const int chunks = n;
    for (int step = 0; step < chunks + n - 2; ++step) {
      Phase p;
      for (int i = 0; i + 1 < n; ++i) {
        const int j = step - i;
        if (j >= 0 && j < chunks) p.transfers.push_back(Transfer{chain[static_cast<std::size_t>(i)],
                                                                 chain[static_cast<std::size_t>(i + 1)], c.bytes / chunks});
      }
      push_phase(s, std::move(p), 1);
    }
    return s;
  }
  // Two rings in opposite directions each carry half, and with 2 ranks "both ways" is one link
  // pair already: the bidirectional ring then sends the whole chunk in each direction once.
  const bool both = bidirectional && n > 2;
  Phase p;
  add_ring_step(p, ordered, both ? chunk / 2 : chunk, both);
  switch (c.op) {
    case CollectiveOp::AllReduce: {
      Phase gather = p;
      push_phase(s, std::move(p), n - 1, true);
      push_phase(s, std::move(gather), n - 1);
      break;
    }
    case CollectiveOp::ReduceScatter: push_phase(s, std::move(p), n - 1, true); break;
    default: push_phase(s, std::move(p), n - 1); break;
  }
  return s;
}

}  // namespace trnsim::net::algo
