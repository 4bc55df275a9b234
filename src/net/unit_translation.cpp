#include "unit_translation.hpp"

#include <array>
#include <numeric>
#include <vector>

namespace trnsim::net {
namespace {

// The kinds wired unit by unit (a stride per unit) and those of the Clos (a stride per period).
bool translates(LinkKind k) { return k == LinkKind::Dma || k == LinkKind::NeuronLink || k == LinkKind::UltraServerZ; }
bool of_clos(LinkKind k) { return k == LinkKind::EfaPort || k == LinkKind::ClosUplink || k == LinkKind::ClosDownlink; }
// Kinds wired interleaved (a leaf's uplink and downlink to each spine in turn) count as one block.
int block_class(LinkKind k) { return k == LinkKind::ClosDownlink ? static_cast<int>(LinkKind::ClosUplink) : static_cast<int>(k); }

// Every link of [first, end) is one `fits` accepts and its predecessor's image `stride` ids later,
// with both ends moved by `moved` (a vertex's image, -1 for none), the same kind, bandwidth and
// latency.
template <class Moved, class Fits>
bool wired_alike(const Topology& t, LinkId first, LinkId end, LinkId stride, const Moved& moved, const Fits& fits) {
  for (LinkId l = first; l < end; ++l) {
    const Link& a = t.link(l);
    if (!fits(a)) return false;
    const VertexId src = moved(a.src), dst = moved(a.dst);
    if (src < 0 || dst < 0) return false;
    if (l + stride >= end) continue;
    const Link& b = t.link(l + stride);
    if (b.kind != a.kind || b.src != src || b.dst != dst || b.bandwidth != a.bandwidth || b.latency != a.latency) {
      return false;
    }
  }
  return true;
}

}  // namespace

UnitTranslation unit_translation(const Topology& topology) {
  UnitTranslation out;
  const hw::DeviceMap& dm = topology.devices();
  out.ranks_per_chip = dm.ranks_per_chip();
  out.dma_end = dm.ranks();
  out.cores_alike = dm.ranks() <= topology.link_count();
  for (LinkId l = 0; out.cores_alike && l < out.dma_end; ++l) {
    const Link& a = topology.link(l);
    const Link& first = topology.link(0);
    out.cores_alike = a.kind == LinkKind::Dma && a.src == l / out.ranks_per_chip && a.dst == a.src &&
                      a.bandwidth == first.bandwidth && a.latency == first.latency;
  }
  const int per_unit = dm.instances_per_ultraserver();
  if (per_unit < 1 || dm.instances() % per_unit != 0 || dm.instances() / per_unit < 2) return out;
  const int units = dm.instances() / per_unit;
  const int chips_per_unit = per_unit * dm.chips_per_instance();
  const int chips = dm.chips();
  // The Clos's period: the fewest units that are whole leaf groups of instances, when the
  // cluster holds at least two of them (else no shift of the Clos has an image).
  int period = 0;
  if (topology.has_clos()) {
    const int radix = topology.leaf_group_size();
    const int p = radix / std::gcd(radix, per_unit);
    if (static_cast<long long>(p) * 2 <= units) period = p;
  }
  // Each translated kind must be one block of ids; blocks are found in id order, so the ranges
  // are too.
  struct Block {
    LinkKind kind;
    LinkId first, end;
  };
  std::vector<Block> found;
  std::array<int, kLinkKinds> blocks{};
  for (LinkId l = 0; l < topology.link_count();) {
    const LinkKind kind = topology.link(l).kind;
    LinkId end = l + 1;
    while (end < topology.link_count() && block_class(topology.link(end).kind) == block_class(kind)) ++end;
    ++blocks[static_cast<std::size_t>(block_class(kind))];
    found.push_back({kind, l, end});
    l = end;
  }
  const int leaves_per_period =
      period > 0 ? period * per_unit / topology.leaf_group_size() * topology.rails() : 0;
  const auto in_unit = [&](VertexId v) { return v < chips ? v + chips_per_unit : VertexId{-1}; };
  const auto in_clos = [&](VertexId v) -> VertexId {
    switch (topology.vertex(v).kind) {
      case VertexKind::Chip: return v + period * chips_per_unit;
      case VertexKind::Leaf: return v + leaves_per_period;
      case VertexKind::Spine: return v;
      default: return -1;
    }
  };
  for (const Block& b : found) {
    if (blocks[static_cast<std::size_t>(block_class(b.kind))] != 1) continue;
    if (translates(b.kind)) {
      if ((b.end - b.first) % units != 0) continue;
      const LinkId stride = (b.end - b.first) / units;
      // The DMA links, checked above where cores are alike (rank r's a loop on chip r / ranks per
      // chip, all of one bandwidth and latency), are each other's images; any other link must
      // stay inside one unit: one leaving its unit is no torus or Z-ring link of it.
      const bool dma_checked = b.kind == LinkKind::Dma && out.cores_alike && b.first == 0 && b.end == out.dma_end;
      const auto inside = [&](const Link& a) { return a.src / chips_per_unit == a.dst / chips_per_unit; };
      if (!dma_checked && !wired_alike(topology, b.first, b.end, stride, in_unit, inside)) continue;
      out.ranges.at(static_cast<std::size_t>(out.range_count++)) = {b.first, b.end, stride, 1};
    } else if (of_clos(b.kind) && period > 0) {
      // The stride is what the tables say of the first link of the block; every link is checked.
      const LinkId stride = b.kind == LinkKind::EfaPort
                                ? topology.efa_port_up(period * chips_per_unit) - topology.efa_port_up(0)
                                : topology.clos_uplink(topology.leaf(0, period * per_unit), 0) -
                                      topology.clos_uplink(topology.leaf(0, 0), 0);
      if (stride <= 0 || !wired_alike(topology, b.first, b.end, stride, in_clos, [](const Link&) { return true; })) continue;
      out.ranges.at(static_cast<std::size_t>(out.range_count++)) = {b.first, b.end, stride, period};
      out.clos_period = period;
    }
  }
  out.units = units;
  out.chips_per_unit = chips_per_unit;
  out.ranks_per_unit = chips_per_unit * dm.ranks_per_chip();
  return out;
}

}  // namespace trnsim::net
