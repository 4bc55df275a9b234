// 2D-torus all-reduce (as on TPU pods, Ying et al. 2018): reduce-scatter along each row ring
// (R ranks: R-1 steps of S/R), then along each column ring (C ranks: C-1 steps of S/(RC)), then
// all-gather along columns and along rows. Rows use the X links, columns the Y links. The
// reduce-scatter steps reduce.
#include "algorithms.hpp"

namespace trnsim::net::algo {

Schedule torus_2d(const Collective& c, const std::vector<std::vector<int>>& rows,
                  const std::vector<std::vector<int>>& columns) {
  Schedule s;
  s.algorithm = Algorithm::Torus2D;
  const int r = static_cast<int>(rows.front().size());
  const int cols = static_cast<int>(columns.front().size());
  auto step = [](const std::vector<std::vector<int>>& rings, double bytes) {
    Phase p;
    for (const auto& ring : rings) add_ring_step(p, ring, bytes, false);
    return p;
  };
  const double column_chunk = c.bytes / (static_cast<double>(r) * cols);
  push_phase(s, step(rows, c.bytes / r), r - 1, true);
  push_phase(s, step(columns, column_chunk), cols - 1, true);
  push_phase(s, step(columns, column_chunk), cols - 1);
  push_phase(s, step(rows, c.bytes / r), r - 1);
  return s;
}

}  // namespace trnsim::net::algo
