#pragma once
// Net-internal: the translations of a cluster by whole units (an UltraServer, or an instance where
// there are none) that carry its links onto its links. Units are wired alike: the builder adds
// each unit's DMA loops, torus links and Z-ring links in the same order, so the image of such a
// link under a shift of k units is its id plus k times its kind's stride. What is translated is
// checked, not assumed: unit_translation() compares every link of these kinds with its image one
// unit on (ends shifted by one unit's chips, the same kind, bandwidth and latency), and leaves a
// kind out when one does not match. Links that leave a unit (EFA, the Clos, switches) never
// translate: the Clos's spine is a hash of the pair (router.hpp), not an image of anything.
//
// Computed once per fabric by the Router, which routes a pair of chips inside a later unit as the
// image of the same pair in unit 0; used by GroupSetPricing to price a group inside one unit as
// the image of the same group in unit 0, and a group whose ranks all sit c cores into their
// chips as the image of the group c cores back (the same chips, so the same routes but for the
// DMA links). Its routes are the images of
// unit 0's (the torus and Z-ring routing rules read only positions inside an instance and the
// source's instance, and each chip's links are wired in the same order in every unit), and so
// are its transfers' terms: its time is the same.
#include <algorithm>
#include <array>
#include <span>

#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct UnitTranslation {
  struct Range {
    LinkId first = 0, end = 0;  // the kind's links: one block of ids, `stride` per unit
    LinkId stride = 0;
  };
  int units = 0;           // 0: no translation (one unit, or units the builder did not wire alike)
  int ranks_per_unit = 0;
  int chips_per_unit = 0;
  std::array<Range, 3> ranges{};  // in id order
  int range_count = 0;
  // Shifting ranks by c cores inside their chips: every DMA link (rank r's is link r, a loop on
  // its chip) has the same bandwidth and latency, so a transfer's path keeps its chips' route
  // and only its DMA link moves, to link r + c.
  bool cores_alike = false;
  int ranks_per_chip = 1;
  LinkId dma_end = 0;  // DMA links are [0, dma_end)

  // Contract: the image of link l under a shift of k units, or -1 when l's kind does not
  // translate. O(1). Within a range the image keeps the order of ids, and ranges stay in order.
  LinkId shift(LinkId l, int k) const {
    for (int i = 0; i < range_count; ++i) {
      const Range& r = ranges[static_cast<std::size_t>(i)];
      if (l >= r.first && l < r.end) return l + k * r.stride;
    }
    return -1;
  }
  // Contract: the image of link l when ranks move by k units and c cores (l a link of a group
  // whose every link shift() translates when k > 0). O(1); keeps the order of ids.
  LinkId image(LinkId l, int k, int c) const {
    const LinkId m = k == 0 ? l : shift(l, k);
    return l < dma_end ? m + c : m;
  }
  // Whether link l has an image under shifts of whole units (its kind is translated). O(1).
  bool translates(LinkId l) const { return shift(l, 1) >= 0; }

  // How far a group of ranks (valid, not empty) lies from its image in unit 0 and core 0: `units`
  // when every rank is in one unit past the first, else 0; `cores` the fewest cores any rank
  // sits into its chip when cores are alike, else 0. The image is each rank minus units x
  // ranks_per_unit + cores; its routes are the group's once every link translates (units > 0).
  struct Offset {
    int units = 0, cores = 0;
  };
  Offset offset_of(std::span<const int> ranks) const {
    Offset o;
    if (units > 0) {
      const int unit = ranks.front() / ranks_per_unit;
      if (std::all_of(ranks.begin(), ranks.end(), [&](int r) { return r / ranks_per_unit == unit; })) o.units = unit;
    }
    if (cores_alike) {
      o.cores = ranks_per_chip;
      for (const int r : ranks) o.cores = std::min(o.cores, r % ranks_per_chip);
    }
    return o;
  }
};

// Contract: the translations of `topology`'s units. O(links) (every link of the translated kinds
// compared with its image).
UnitTranslation unit_translation(const Topology& topology);

}  // namespace trnsim::net
