#include "trnsim/report/analysis/link_utilisation.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "trnsim/error.hpp"

namespace trnsim::report {

LinkUtilisation link_utilisation(std::span<const net::LinkUsage> links, const net::Topology* topology,
                                 double step_time_s, std::size_t top_n) {
  LinkUtilisation out;
  auto fraction_of = [&](const net::LinkUsage& l) { return step_time_s > 0 ? l.busy_s / step_time_s : 0; };
  // Busy fraction descending, link id on ties: a total order, so the top is the same whatever
  // the order of the list.
  const auto busier = [&](std::uint32_t a, std::uint32_t b) {
    const double fa = fraction_of(links[a]), fb = fraction_of(links[b]);
    if (fa != fb) return fa > fb;
    return links[a].id < links[b].id;
  };
  // The top_n busiest links that carried traffic so far, busiest first, by index; only they are
  // named: a 65,536-chip trn2u cluster has 802,816 links.
  std::vector<std::uint32_t> top;
  top.reserve(top_n + 1);
  double last_fraction = 0;
  net::LinkId last_id = 0;
  std::array<LinkKindLoad, net::kLinkKinds> kinds{};
  for (std::size_t i = 0; i < links.size(); ++i) {
    const net::LinkUsage& l = links[i];
    if (l.bytes <= 0 && l.busy_s <= 0) continue;
    const double fraction = fraction_of(l);
    // Against the last of a full top (its fraction and id kept): most links are not busier.
    if (top.size() < top_n || (top_n > 0 && (fraction > last_fraction || (fraction == last_fraction && l.id < last_id)))) {
      const auto at = static_cast<std::uint32_t>(i);
      top.insert(std::upper_bound(top.begin(), top.end(), at, busier), at);
      if (top.size() > top_n) top.pop_back();
      last_fraction = fraction_of(links[top.back()]);
      last_id = links[top.back()].id;
    }
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
  out.top.reserve(top.size());
  if (!top.empty() && topology == nullptr) throw InternalError("link_utilisation: links with traffic and no topology to name them");
  for (const std::uint32_t i : top) {
    const net::LinkUsage& l = links[i];
    out.top.push_back({l.id, l.kind, net::source_name(*topology, l.id), net::destination_name(*topology, l.id),
                       topology->link(l.id).bandwidth, l.bytes, l.busy_s, fraction_of(l)});
  }
  return out;
}

}  // namespace trnsim::report
