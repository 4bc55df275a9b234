// Hierarchical collectives: I instances holding L ranks each. All-reduce = reduce-scatter inside
// each instance (chunks of S/L), all-reduce across instances between the ranks with the same local
// index (chunks of S/(LI): a reduce-scatter then an all-gather), all-gather inside. Reduce-scatter:
// the first two stages (the reducing half across); all-gather: the last two, reversed.
// Each stage is a ring (L-1 or I-1 steps; inside an instance in both directions with half the chunk
// each when L > 2, the links carrying both at once) or, with `mesh`, one mesh step (every rank
// sends its chunk to every peer of the stage at once: Neuron's small-message "Mesh+Mesh").
#include "algorithms.hpp"

namespace trnsim::net::algo {

Schedule hierarchical(const Collective& c, const std::vector<std::vector<int>>& per_instance, bool mesh) {
  Schedule s;
  s.algorithm = mesh ? Algorithm::HierarchicalMesh : Algorithm::Hierarchical;
  const int instances = static_cast<int>(per_instance.size());
  const int local = static_cast<int>(per_instance.front().size());
  const double inner_chunk = c.bytes / local;
  const double outer_chunk = c.bytes / (static_cast<double>(local) * instances);
  const bool both = local > 2;
  auto inside = [&] {
    Phase p;
    for (const auto& ring : per_instance) {
      if (mesh) add_mesh_step(p, ring, inner_chunk);
      else add_ring_step(p, ring, both ? inner_chunk / 2 : inner_chunk, both);
    }
    return p;
  };
  auto across = [&] {
    Phase p;
    std::vector<int> ring(static_cast<std::size_t>(instances));
    for (int j = 0; j < local; ++j) {
      for (int i = 0; i < instances; ++i) ring[static_cast<std::size_t>(i)] = per_instance[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      if (mesh) add_mesh_step(p, ring, outer_chunk);
      else add_ring_step(p, ring, outer_chunk, false);
    }
    return p;
  };
  const int inner_steps = mesh ? 1 : local - 1;
  const int outer_steps = mesh ? 1 : instances - 1;
  switch (c.op) {
    case CollectiveOp::AllReduce:
      push_phase(s, inside(), inner_steps, true);
      push_phase(s, across(), outer_steps, true);
      push_phase(s, across(), outer_steps);
      push_phase(s, inside(), inner_steps);
      break;
    case CollectiveOp::ReduceScatter:
      push_phase(s, inside(), inner_steps, true);
      push_phase(s, across(), outer_steps, true);
      break;
    case CollectiveOp::AllGather:
      push_phase(s, across(), outer_steps);
      push_phase(s, inside(), inner_steps);
      break;
    default: break;  // rejected by supports()
  }
  return s;
}

}  // namespace trnsim::net::algo
