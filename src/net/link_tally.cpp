#include "link_tally.hpp"

#include <algorithm>

namespace trnsim::net {

void LinkTally::add(LinkId l, double b) {
  double& slot = bytes[static_cast<std::size_t>(l)];
  if (slot == 0) touched.push_back(l);
  slot += b;
}

std::vector<std::pair<LinkId, double>> LinkTally::take() {
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<std::pair<LinkId, double>> out;
  out.reserve(touched.size());
  for (LinkId l : touched) {
    double& slot = bytes[static_cast<std::size_t>(l)];
    if (slot > 0) out.emplace_back(l, slot);
    slot = 0;
  }
  touched.clear();
  return out;
}

}  // namespace trnsim::net
