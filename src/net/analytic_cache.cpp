#include "trnsim/net/analytic_cache.hpp"

#include <algorithm>
#include <bit>

namespace trnsim::net {

std::size_t hash_key(const CollectiveKeyView& k) {
  // FNV-1a over the fields; only used to find equal keys, never to order anything.
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 1099511628211ULL;
  };
  mix(static_cast<std::uint64_t>(k.op));
  mix(static_cast<std::uint64_t>(k.algorithm));
  mix(std::bit_cast<std::uint64_t>(k.bytes));
  for (const int r : k.ranks) mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(r)));
  return static_cast<std::size_t>(h);
}

bool same_key(const CollectiveKeyView& a, const CollectiveKeyView& b) {
  return a.op == b.op && a.algorithm == b.algorithm && a.bytes == b.bytes &&
         std::equal(a.ranks.begin(), a.ranks.end(), b.ranks.begin(), b.ranks.end());
}

}  // namespace trnsim::net
