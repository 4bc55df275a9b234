#include "link_tally.hpp"

#include <algorithm>

namespace trnsim::net {

void LinkTally::add(LinkId l, double b) {
  double& slot = bytes[static_cast<std::size_t>(l)];
  if (slot == 0) touched.push_back(l);
  slot += b;
}

std::vector<std::pair<LinkId, double>> LinkTally::take() {
  // A tally that touched more than an eighth of the links (a group set's, at 65,536 chips
  // hundreds of thousands) reads them all in order instead of sorting the touched ones: the same
  // links with bytes > 0, in the same order, every slot left at zero.
  if (touched.size() > bytes.size() / 8) {
    std::vector<std::pair<LinkId, double>> out;
    out.reserve(touched.size());
    for (std::size_t l = 0; l < bytes.size(); ++l) {
      double& slot = bytes[l];
      if (slot == 0) continue;
      if (slot > 0) out.emplace_back(static_cast<LinkId>(l), slot);
      slot = 0;
    }
    touched.clear();
    return out;
  }
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
