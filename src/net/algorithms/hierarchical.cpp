// Hierarchical collectives: I instances holding L ranks each. All-reduce = ring reduce-scatter
// inside each instance (L-1 steps of S/L, the ring in both directions with S/(2L) each when L > 2), ring all-reduce across instances between the ranks with
// the same local index (2(I-1) steps of S/(LI): I-1 reducing, I-1 gathering), ring all-gather
// inside (L-1 steps of S/L). Reduce-scatter: the first two stages (I-1 reducing steps across);
// all-gather: the last two, reversed.
#include "algorithms.hpp"

namespace trnsim::net::algo {

Schedule hierarchical(const Collective& c, const std::vector<std::vector<int>>& per_instance) {
  Schedule s;
  s.algorithm = Algorithm::Hierarchical;
  const int instances = static_cast<int>(per_instance.size());
  const int local = static_cast<int>(per_instance.front().size());
  const double inner_chunk = c.bytes / local;
  const double outer_chunk = c.bytes / (static_cast<double>(local) * instances);
  // Inside an instance the ring runs both ways, half the chunk each, where it has more than two
  // ranks: the NeuronLink (NVLink) carries both directions at once, as the flat bidirectional ring
  // uses them. Across instances one ring per local index already spreads over every NIC.
  const bool both = local > 2;
  auto inside = [&] {
    Phase p;
    for (const auto& ring : per_instance) add_ring_step(p, ring, both ? inner_chunk / 2 : inner_chunk, both);
    return p;
  };
  auto across = [&] {
    Phase p;
    std::vector<int> ring(static_cast<std::size_t>(instances));
    for (int j = 0; j < local; ++j) {
      for (int i = 0; i < instances; ++i) ring[static_cast<std::size_t>(i)] = per_instance[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      add_ring_step(p, ring, outer_chunk, false);
    }
    return p;
  };
  switch (c.op) {
    case CollectiveOp::AllReduce:
      push_phase(s, inside(), local - 1, true);
      push_phase(s, across(), instances - 1, true);
      push_phase(s, across(), instances - 1);
      push_phase(s, inside(), local - 1);
      break;
    case CollectiveOp::ReduceScatter:
      push_phase(s, inside(), local - 1, true);
      push_phase(s, across(), instances - 1, true);
      break;
    case CollectiveOp::AllGather:
      push_phase(s, across(), instances - 1);
      push_phase(s, inside(), local - 1);
      break;
    default: break;  // rejected by supports()
  }
  return s;
}

}  // namespace trnsim::net::algo
