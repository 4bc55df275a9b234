#include "unit_translation.hpp"

#include <array>
#include <vector>

namespace trnsim::net {
namespace {

bool translates(LinkKind k) { return k == LinkKind::Dma || k == LinkKind::NeuronLink || k == LinkKind::UltraServerZ; }

// Every link of [first, end) is its predecessor's image one unit on, `stride` ids later, and
// stays inside its unit.
bool wired_alike(const Topology& t, LinkId first, LinkId end, LinkId stride, int chips_per_unit) {
  for (LinkId l = first; l < end; ++l) {
    const Link& a = t.link(l);
    if (a.src >= t.devices().chips() || a.dst >= t.devices().chips()) return false;
    if (a.src / chips_per_unit != a.dst / chips_per_unit) return false;
    if (l + stride >= end) continue;
    const Link& b = t.link(l + stride);
    if (b.kind != a.kind || b.src != a.src + chips_per_unit || b.dst != a.dst + chips_per_unit ||
        b.bandwidth != a.bandwidth || b.latency != a.latency) {
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
  // Each translated kind must be one block of ids, a whole number of units long; blocks are
  // found in id order, so the ranges are too.
  struct Block {
    LinkKind kind;
    LinkId first, end;
  };
  std::vector<Block> found;
  std::array<int, kLinkKinds> blocks{};
  for (LinkId l = 0; l < topology.link_count();) {
    const LinkKind kind = topology.link(l).kind;
    LinkId end = l + 1;
    while (end < topology.link_count() && topology.link(end).kind == kind) ++end;
    ++blocks[static_cast<std::size_t>(kind)];
    found.push_back({kind, l, end});
    l = end;
  }
  for (const Block& b : found) {
    if (!translates(b.kind) || blocks[static_cast<std::size_t>(b.kind)] != 1 || (b.end - b.first) % units != 0) continue;
    const LinkId stride = (b.end - b.first) / units;
    if (!wired_alike(topology, b.first, b.end, stride, chips_per_unit)) continue;
    out.ranges.at(static_cast<std::size_t>(out.range_count++)) = {b.first, b.end, stride};
  }
  out.units = units;
  out.chips_per_unit = chips_per_unit;
  out.ranks_per_unit = chips_per_unit * dm.ranks_per_chip();
  return out;
}

}  // namespace trnsim::net
