#include "link_tally.hpp"

namespace trnsim::net {

std::vector<std::pair<LinkId, double>> LinkTally::take() {
  // In the order of first touch, not sorted: every reader adds an entry's bytes to its own link,
  // one entry per link, so the order of entries changes no sum. (Sorting the links of every
  // group's tally, or reading all links for a set's, was a tenth of a 65,536-chip run.) A link
  // touched again after a zero addition is listed twice in `touched`: its second copy finds the
  // slot already cleared.
  std::vector<std::pair<LinkId, double>> out;
  out.reserve(touched.size());
  for (const LinkId l : touched) {
    double& slot = bytes[static_cast<std::size_t>(l)];
    if (slot > 0) out.emplace_back(l, slot);
    slot = 0;
  }
  touched.clear();
  return out;
}

}  // namespace trnsim::net
