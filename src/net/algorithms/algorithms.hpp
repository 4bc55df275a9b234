#pragma once
// Private: one function per algorithm (each in its own file), and the step patterns they share.
#include <vector>

#include "trnsim/net/collective.hpp"

namespace trnsim::net::algo {

// One step of a ring over `ring` (global ranks, in order): each rank sends `bytes` to the next;
// with `both_ways`, also `bytes` to the previous.
void add_ring_step(Phase& phase, const std::vector<int>& ring, double bytes, bool both_ways);
// One mesh step among `peers`: each sends `bytes` to every other.
void add_mesh_step(Phase& phase, const std::vector<int>& peers, double bytes);
// Appends `p` repeated `repeats` times (nothing for repeats < 1 or no transfers); `reduce` marks
// a phase whose receivers reduce what they receive (Phase::reduce).
void push_phase(Schedule& s, Phase&& p, int repeats, bool reduce = false);

Schedule ring(const Collective& c, const std::vector<int>& ordered, bool bidirectional);
// `mesh`: each stage is one mesh step (every rank to every peer of its ring at once) instead of
// a ring's n - 1 steps.
Schedule hierarchical(const Collective& c, const std::vector<std::vector<int>>& per_instance, bool mesh);
Schedule torus_2d(const Collective& c, const std::vector<std::vector<int>>& rows,
                  const std::vector<std::vector<int>>& columns);
Schedule halving_doubling(const Collective& c, const std::vector<int>& ordered);
Schedule direct(const Collective& c);

}  // namespace trnsim::net::algo
