#pragma once
// Net-internal: the translations of a cluster by whole units (an UltraServer, or an instance where
// there are none) that carry its links onto its links. Units are wired alike: the builder adds
// each unit's DMA loops, torus links and Z-ring links in the same order, so the image of such a
// link under a shift of k units is its id plus k times its kind's stride. The Clos between
// instances translates too, by whole leaf groups: its EFA ports are wired chip by chip and its
// leaf-spine links leaf by leaf, and a pair's spine depends only on where its source lies within
// its leaf group, its instance offset and its rails (router.cpp, clos_spine_hash), so a shift by
// a multiple of the Clos period (the fewest units that are whole leaf groups of instances)
// carries a route across the Clos onto the shifted pair's route. What is translated is checked, not assumed:
// unit_translation() compares every link of these kinds with its image one unit (the Clos: one
// period) on (ends shifted, the same kind, bandwidth and latency), and leaves a kind out when one
// does not match. Switches (NVSwitch, trn3's) never translate.
//
// Computed once per fabric by the Router, which routes a pair of chips inside a later unit as the
// image of the same pair in unit 0; used by GroupSetPricing to price a group inside one unit as
// the image of the same group in unit 0, a group across several units as the image of the group
// that many whole Clos periods back, and a group whose ranks all sit c cores into their chips as
// the image of the group c cores back (the same chips, so the same routes but for the DMA links).
// Its routes are the images of the first's (the torus and Z-ring routing rules read only
// positions inside an instance and the source's instance, the Clos rule positions in the leaf
// group and offsets, and each chip's links are wired in the same order in every unit), and so
// are its transfers' terms: its time is the same.
#include <algorithm>
#include <array>
#include <span>

#include "trnsim/net/topology.hpp"

namespace trnsim::net {

struct UnitTranslation {
  struct Range {
    LinkId first = 0, end = 0;  // the kind's links: one block of ids
    LinkId stride = 0;          // ids from a link to its image `period` units on
    int period = 1;             // units; a shift by any other number of units has no image
  };
  int units = 0;           // 0: no translation (one unit, or units the builder did not wire alike)
  int ranks_per_unit = 0;
  int chips_per_unit = 0;
  int clos_period = 0;     // the Clos ranges' period in units (0: the Clos does not translate)
  std::array<Range, 5> ranges{};  // in id order
  int range_count = 0;
  // Shifting ranks by c cores inside their chips: every DMA link (rank r's is link r, a loop on
  // its chip) has the same bandwidth and latency, so a transfer's path keeps its chips' route
  // and only its DMA link moves, to link r + c.
  bool cores_alike = false;
  int ranks_per_chip = 1;
  LinkId dma_end = 0;  // DMA links are [0, dma_end)

  // Which range holds link l, or -1. O(ranges).
  int range_of(LinkId l) const {
    for (int i = 0; i < range_count; ++i) {
      const Range& r = ranges[static_cast<std::size_t>(i)];
      if (l >= r.first && l < r.end) return i;
    }
    return -1;
  }
  // Contract: the image of link l under a shift of k units, or -1 when l's kind does not
  // translate or k is not a multiple of its period. O(ranges). Within a range the image keeps
  // the order of ids, and ranges stay in order.
  LinkId shift(LinkId l, int k) const {
    const int i = range_of(l);
    if (i < 0) return -1;
    const Range& r = ranges[static_cast<std::size_t>(i)];
    return k % r.period == 0 ? l + k / r.period * r.stride : -1;
  }
  // Contract: the image of link l when ranks move by k units and c cores (l a link of a group
  // whose every link shift() translates by k when k > 0). O(ranges); keeps the order of ids.
  LinkId image(LinkId l, int k, int c) const {
    const LinkId m = k == 0 ? l : shift(l, k);
    return l < dma_end ? m + c : m;
  }
  // image()'s arithmetic for a shift of k units, worked out once: a pass over many links (a
  // group's, a pair set's) looks each link's range up once (range_of) and moves it in O(1),
  // without dividing.
  struct Mover {
    std::array<LinkId, 5> by{};  // per range: how far its links move
    LinkId dma_end = 0;
    // Contract: image(l, k, c) for l in range `range` (range_of(l)) that translates by k.
    LinkId at(LinkId l, int range, int c) const {
      return l + (range < 0 ? 0 : by[static_cast<std::size_t>(range)]) + (l < dma_end ? c : 0);
    }
  };
  Mover mover(int k) const {
    Mover m;
    for (int i = 0; i < range_count; ++i) {
      const Range& r = ranges[static_cast<std::size_t>(i)];
      m.by[static_cast<std::size_t>(i)] = k / r.period * r.stride;
    }
    m.dma_end = dma_end;
    return m;
  }
  // The units a shift of link l must be a multiple of for it to have an image; 0 when its kind
  // does not translate. O(ranges).
  int period(LinkId l) const {
    const int i = range_of(l);
    return i < 0 ? 0 : ranges[static_cast<std::size_t>(i)].period;
  }
  // The period of a set of links: the Clos period if one of them is the Clos's, 1 if none is,
  // 0 if one does not translate (periods are 1 and the Clos period, which is a multiple of 1).
  template <class Links>
  int period_of(const Links& links) const {
    int p = 1;
    for (const LinkId l : links) {
      const int q = period(l);
      if (q == 0) return 0;
      p = std::max(p, q);
    }
    return p;
  }

  // How far a group of ranks (valid, not empty) lies from its image: `units` the unit every rank
  // is in when that is one unit past the first; for a group across several units, its first unit
  // rounded down to a whole Clos period (0 where the Clos does not translate); `cores` the fewest
  // cores any rank sits into its chip when cores are alike, else 0. The image is each rank minus
  // units x ranks_per_unit + cores; its routes are the group's once every link translates by
  // `units` (period_of divides it).
  struct Offset {
    int units = 0, cores = 0;
  };
  Offset offset_of(std::span<const int> ranks) const {
    Offset o;
    if (units > 0) {
      int low = ranks.front() / ranks_per_unit, high = low;
      for (const int r : ranks) {
        low = std::min(low, r / ranks_per_unit);
        high = std::max(high, r / ranks_per_unit);
      }
      if (low == high) {
        o.units = low;
      } else if (clos_period > 0) {
        o.units = low / clos_period * clos_period;
      }
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
