#pragma once
// Net-internal: bytes per link, gathered sparsely (a dense array and the links touched), for the
// analytic model's per-call link figures.
#include <utility>
#include <vector>

#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct LinkTally {
  std::vector<double> bytes;  // sized to the topology's link count, zero between takes
  std::vector<LinkId> touched;
  // Inline: the analytic model adds millions of (link, bytes) a run at 65,536 chips.
  void add(LinkId l, double b) {
    double& slot = bytes[static_cast<std::size_t>(l)];
    if (slot == 0) touched.push_back(l);
    slot += b;
  }
  // Contract: the links with bytes > 0, each once, in the order they were first touched; leaves
  // the tally empty. O(touched).
  std::vector<std::pair<LinkId, double>> take();
};

}  // namespace trnsim::net
