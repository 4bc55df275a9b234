// Direct algorithms: every transfer at once. All-to-all: each rank sends S/n to every other rank.
// All-gather and reduce-scatter (Neuron's "mesh"): each rank sends its S/n piece to every other;
// all-reduce is both, one step each (the first reducing, as reduce-scatter's). Broadcast: the root sends S to every other rank. Send/recv:
// one transfer of S.
#include "algorithms.hpp"

namespace trnsim::net::algo {

void add_mesh_step(Phase& phase, const std::vector<int>& peers, double bytes) {
  for (int a : peers) {
    for (int b : peers) {
      if (a != b) phase.transfers.push_back(Transfer{a, b, bytes});
    }
  }
}

Schedule direct(const Collective& c) {
  Schedule s;
  s.algorithm = Algorithm::Direct;
  const auto& r = c.ranks;
  const double piece = c.bytes / static_cast<double>(r.size());
  auto mesh = [&] {
    Phase p;
    add_mesh_step(p, r, piece);
    return p;
  };
  switch (c.op) {
    case CollectiveOp::AllToAll:
    case CollectiveOp::AllGather: push_phase(s, mesh(), 1); break;
    case CollectiveOp::ReduceScatter: push_phase(s, mesh(), 1, true); break;
    case CollectiveOp::AllReduce:
      push_phase(s, mesh(), 1, true);
      push_phase(s, mesh(), 1);
      break;
    case CollectiveOp::Broadcast: {
      Phase p;
      for (std::size_t i = 1; i < r.size(); ++i) p.transfers.push_back(Transfer{r[0], r[i], c.bytes});
      push_phase(s, std::move(p), 1);
      break;
    }
    case CollectiveOp::SendRecv: {
      Phase p;
      p.transfers.push_back(Transfer{r[0], r[1], c.bytes});
      push_phase(s, std::move(p), 1);
      break;
    }
  }
  return s;
}

}  // namespace trnsim::net::algo
