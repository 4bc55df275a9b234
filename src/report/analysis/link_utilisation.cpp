#include "trnsim/report/analysis/link_utilisation.hpp"

#include <algorithm>
#include <array>

namespace trnsim::report {

LinkUtilisation link_utilisation(std::span<const net::LinkUsage> links, double step_time_s, std::size_t top_n) {
  LinkUtilisation out;
  std::vector<LinkLoad> loads;
  loads.reserve(links.size());
  std::array<LinkKindLoad, net::kLinkKinds> kinds{};
  for (const net::LinkUsage& l : links) {
    if (l.bytes <= 0 && l.busy_s <= 0) continue;
    const double fraction = step_time_s > 0 ? l.busy_s / step_time_s : 0;
    loads.push_back({l.id, l.kind, l.src, l.dst, l.bandwidth, l.bytes, l.busy_s, fraction});
    LinkKindLoad& k = kinds[static_cast<std::size_t>(l.kind)];
    k.kind = l.kind;
    ++k.links;
    k.bytes += l.bytes;
    k.mean_busy_fraction += fraction;  // a sum until divided below
    k.max_busy_fraction = std::max(k.max_busy_fraction, fraction);
  }
  for (LinkKindLoad& k : kinds) {
    if (k.links == 0) continue;
    k.mean_busy_fraction /= static_cast<double>(k.links);
    out.kinds.push_back(k);
  }
  std::sort(loads.begin(), loads.end(), [](const LinkLoad& a, const LinkLoad& b) {
    if (a.busy_fraction != b.busy_fraction) return a.busy_fraction > b.busy_fraction;
    return a.id < b.id;
  });
  if (loads.size() > top_n) loads.resize(top_n);
  out.top = std::move(loads);
  return out;
}

}  // namespace trnsim::report
