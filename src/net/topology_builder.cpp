// Wiring rules of each hardware family. Per-chip bandwidths come from the preset (all of a chip's
// links of one kind together, one direction) and are split evenly over the chip's ports of that kind.
#include <algorithm>

#include <fmt/core.h>

#include "topology_builder.hpp"
#include "trnsim/huge_pages.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/topology.hpp"

namespace trnsim::net {

void TopologyBuilder::build(Topology& t) {
  reserve(t);
  chips(t);
  switch (t.cluster_.instance.topology) {
    case hw::IntraTopology::Single: break;
    case hw::IntraTopology::Torus2D: torus(t); break;
    case hw::IntraTopology::NvSwitch: nvswitch(t); break;
    case hw::IntraTopology::Switched: switched(t); break;
  }
  if (t.cluster_.instance.topology == hw::IntraTopology::Torus2D) ultraserver_ring(t);
  clos(t);
}

// Room for the links the rules below can wire, at most (merged torus ports and a fabric that
// turns out absent only leave some unused): at 65,536 chips the link list would otherwise be
// copied at every doubling, about twenty times.
void TopologyBuilder::reserve(Topology& t) {
  const hw::InstanceSpec& inst = t.cluster_.instance;
  const auto chips = static_cast<std::size_t>(t.devices_.chips());
  std::size_t per_chip = 0;  // links between chips or to switches, per chip
  switch (inst.topology) {
    case hw::IntraTopology::Single: break;
    case hw::IntraTopology::Torus2D: per_chip = 4 + 2; break;   // torus ports, Z ring
    case hw::IntraTopology::NvSwitch: per_chip = 2; break;      // up and down
    case hw::IntraTopology::Switched: per_chip = 2 + 2 + 2; break;  // server, UltraServer, inter-rack
  }
  per_chip += 2;  // EFA port, both ways
  const hw::FabricSpec& fab = t.cluster_.fabric;
  const auto leaves = static_cast<std::size_t>(std::max(1, (t.cluster_.instances + std::max(1, fab.leaf_radix) - 1) /
                                                               std::max(1, fab.leaf_radix)) *
                                               std::max(1, inst.chips));
  const std::size_t indexed = chips * per_chip + 2 * leaves * static_cast<std::size_t>(std::max(0, fab.spines));
  reserve_huge(t.links_, static_cast<std::size_t>(t.devices_.ranks()) + indexed);
}

// Chips are vertices [0, chips); links [0, ranks) are the ranks' DMA links, loops on their chip.
// A chip's collectives move collective_dma_share of its dma_bandwidth (the same share on every
// Trainium generation; the presets say which table fixed it), split evenly over its ranks: DMA
// engines belong to cores (16 per NeuronCore-v3, trainium2.rst; 32 per two-core trn1 chip), so a
// rank's transfers do not borrow its neighbours' engines. A chip without a DMA figure (GPUs)
// copies through HBM, reading and writing each byte: half the HBM bandwidth. A transfer crosses
// its sender's DMA link before its route (Router::path); a reduction's read of its operand
// crosses the receiver's.
void TopologyBuilder::chips(Topology& t) {
  const hw::ChipSpec& chip = t.cluster_.instance.chip;
  const double per_chip = chip.dma_bandwidth > 0
                              ? t.cluster_.instance.calibration.collective_dma_share * chip.dma_bandwidth
                              : chip.hbm_bandwidth / 2;
  const int n = t.devices_.chips();
  const int per_rank = t.devices_.ranks_per_chip();
  for (int c = 0; c < n; ++c) t.add_vertex(VertexKind::Chip, c);
  if (!(per_chip > 0)) {
    throw InputError(fmt::format("{}: chip needs dma_bandwidth or hbm_bandwidth for core-to-core copies",
                                 t.cluster_.instance.name));
  }
  for (int c = 0; c < n; ++c) {
    for (int k = 0; k < per_rank; ++k) t.add_dma_link(c, per_chip / per_rank);
  }
}

// trn1/trn2: each instance is an X x Y 2D torus; chip c sits at (c % X, c / X). A chip has two
// ports per dimension longer than 1 (4 for 4x4), each with intra.bandwidth / ports. The positive
// port of a dimension is wired before the negative one: routing breaks a tie between the two
// wraps of a ring towards the port wired first (include/trnsim/net/router.hpp).
void TopologyBuilder::torus(Topology& t) {
  const hw::InstanceSpec& inst = t.cluster_.instance;
  const int nx = inst.torus_x, ny = inst.torus_y;
  if (nx < 1 || ny < 1 || nx * ny != inst.chips) {
    throw InputError(fmt::format("{}: torus {}x{} does not hold its {} chips", inst.name, nx, ny, inst.chips));
  }
  if (inst.intra_ports() == 0) return;
  const double bw = inst.intra_link_bandwidth();
  for (int i = 0; i < t.cluster_.instances; ++i) {
    const int base = i * inst.chips;
    for (int y = 0; y < ny; ++y) {
      for (int x = 0; x < nx; ++x) {
        const int c = base + y * nx + x;
        if (nx > 1) {
          t.add_link(c, base + y * nx + (x + 1) % nx, LinkKind::NeuronLink, bw, inst.intra.latency);
          t.add_link(c, base + y * nx + (x + nx - 1) % nx, LinkKind::NeuronLink, bw, inst.intra.latency);
        }
        if (ny > 1) {
          t.add_link(c, base + ((y + 1) % ny) * nx + x, LinkKind::NeuronLink, bw, inst.intra.latency);
          t.add_link(c, base + ((y + ny - 1) % ny) * nx + x, LinkKind::NeuronLink, bw, inst.intra.latency);
        }
      }
    }
  }
}

// trn2u: the chips at the same coordinates in the instances of one UltraServer form a ring (Z);
// each chip's ultraserver_link bandwidth is split over its two Z ports (positive one wired first).
void TopologyBuilder::ultraserver_ring(Topology& t) {
  const hw::InstanceSpec& inst = t.cluster_.instance;
  const int z = t.devices_.instances_per_ultraserver();
  if (z < 2 || !(inst.ultraserver_link.bandwidth > 0)) return;
  if (t.cluster_.instances % z != 0) {
    throw InputError(fmt::format("{}: {} instances is not a whole number of UltraServers of {}", inst.name,
                                 t.cluster_.instances, z));
  }
  const double bw = inst.ultraserver_link.bandwidth / 2;
  for (int u = 0; u < t.cluster_.instances / z; ++u) {
    for (int k = 0; k < z; ++k) {
      for (int c = 0; c < inst.chips; ++c) {
        const int from = (u * z + k) * inst.chips + c;
        t.add_link(from, (u * z + (k + 1) % z) * inst.chips + c, LinkKind::UltraServerZ, bw, inst.ultraserver_link.latency);
        t.add_link(from, (u * z + (k + z - 1) % z) * inst.chips + c, LinkKind::UltraServerZ, bw,
                   inst.ultraserver_link.latency);
      }
    }
  }
}

// trn3: servers of chips_per_server chips behind an intra-server switch (intra.bandwidth per chip);
// all chips of an UltraServer behind its inter-server switch (ultraserver_link per chip); and
// direct links from each chip to the chip at the same position in the neighbouring UltraServers
// (inter_rack_link per chip, split over the two directions of that ring).
void TopologyBuilder::switched(Topology& t) {
  const hw::InstanceSpec& inst = t.cluster_.instance;
  const int chips = t.devices_.chips();
  const int per_server = inst.chips_per_server > 0 ? inst.chips_per_server : inst.chips;
  if (inst.chips % per_server != 0) {
    throw InputError(fmt::format("{}: {} chips per server do not divide the {} chips of an instance", inst.name,
                                 per_server, inst.chips));
  }
  for (int s = 0; s < chips / per_server; ++s) {
    const VertexId sw = t.add_vertex(VertexKind::ServerSwitch, s);
    for (int c = s * per_server; c < (s + 1) * per_server; ++c) {
      t.add_duplex(c, sw, LinkKind::ServerSwitch, LinkKind::ServerSwitch, inst.intra.bandwidth, inst.intra.latency, 0.0);
    }
  }
  const int chips_per_us = inst.chips * t.devices_.instances_per_ultraserver();
  const int ultraservers = t.devices_.ultraservers();
  if (chips_per_us > per_server && inst.ultraserver_link.bandwidth > 0) {
    for (int u = 0; u < ultraservers; ++u) {
      const VertexId sw = t.add_vertex(VertexKind::RackSwitch, u);
      for (int c = u * chips_per_us; c < std::min(chips, (u + 1) * chips_per_us); ++c) {
        t.add_duplex(c, sw, LinkKind::RackSwitch, LinkKind::RackSwitch, inst.ultraserver_link.bandwidth,
                     inst.ultraserver_link.latency, 0.0);
      }
    }
  }
  if (ultraservers > 1 && inst.inter_rack_link.bandwidth > 0 && chips % chips_per_us == 0) {
    const double bw = inst.inter_rack_link.bandwidth / 2;
    for (int u = 0; u < ultraservers; ++u) {
      for (int p = 0; p < chips_per_us; ++p) {
        const int from = u * chips_per_us + p;
        t.add_link(from, ((u + 1) % ultraservers) * chips_per_us + p, LinkKind::InterRack, bw, inst.inter_rack_link.latency);
        t.add_link(from, ((u + ultraservers - 1) % ultraservers) * chips_per_us + p, LinkKind::InterRack, bw,
                   inst.inter_rack_link.latency);
      }
    }
  }
}

// GPUs: one NVSwitch per instance (the switches of a node taken together), intra.bandwidth per GPU.
void TopologyBuilder::nvswitch(Topology& t) {
  const hw::InstanceSpec& inst = t.cluster_.instance;
  for (int i = 0; i < t.cluster_.instances; ++i) {
    const VertexId sw = t.add_vertex(VertexKind::NvSwitch, i);
    for (int c = i * inst.chips; c < (i + 1) * inst.chips; ++c) {
      t.add_duplex(c, sw, LinkKind::NvLink, LinkKind::NvLink, inst.intra.bandwidth, inst.intra.latency, 0.0);
    }
  }
}

// Between instances: a rail-optimised two-level Clos. Rail r holds chip r of every instance; each
// rail has one leaf per leaf_radix instances; every leaf has one uplink to each spine, together
// leaf_radix x port bandwidth / oversubscription. A chip's port carries its share of the instance's
// EFA bandwidth (efa.bandwidth / chips); the NIC's latency is on the chip -> leaf hop, each switch
// traversal adds switch_latency.
void TopologyBuilder::clos(Topology& t) {
  const hw::InstanceSpec& inst = t.cluster_.instance;
  const hw::FabricSpec& fab = t.cluster_.fabric;
  if (t.cluster_.instances < 2 || !(inst.efa.bandwidth > 0)) return;
  if (fab.leaf_radix < 1 || fab.spines < 1 || !(fab.oversubscription >= 1.0)) {
    throw InputError(fmt::format("{}: fabric needs leaf_radix >= 1, spines >= 1, oversubscription >= 1 (found {}, {}, {})",
                                 inst.name, fab.leaf_radix, fab.spines, fab.oversubscription));
  }
  t.rails_ = inst.chips;
  t.leaf_group_size_ = fab.leaf_radix;
  const int groups = (t.cluster_.instances + fab.leaf_radix - 1) / fab.leaf_radix;
  const double port = inst.efa.bandwidth / inst.chips;
  const double uplink = fab.leaf_radix * port / (fab.oversubscription * fab.spines);
  for (int s = 0; s < fab.spines; ++s) t.spines_.push_back(t.add_vertex(VertexKind::Spine, s));
  const auto slots = static_cast<std::size_t>(groups) * static_cast<std::size_t>(t.rails_) * t.spines_.size();
  t.clos_up_.reserve(slots);
  t.clos_down_.reserve(slots);
  for (int g = 0; g < groups; ++g) {
    for (int r = 0; r < t.rails_; ++r) {
      // Leaves are consecutive vertices: Topology::leaf_spine_slot counts on it.
      const VertexId leaf = t.add_vertex(VertexKind::Leaf, g * t.rails_ + r);
      t.leaves_.push_back(leaf);
      for (VertexId spine : t.spines_) {
        const auto [up, down] = t.add_duplex(leaf, spine, LinkKind::ClosUplink, LinkKind::ClosDownlink, uplink,
                                             fab.switch_latency, fab.switch_latency);
        t.clos_up_.push_back(up);
        t.clos_down_.push_back(down);
      }
    }
  }
  const auto chips = static_cast<std::size_t>(t.devices_.chips());
  t.efa_up_.assign(chips, -1);
  t.efa_down_.assign(chips, -1);
  for (int i = 0; i < t.cluster_.instances; ++i) {
    for (int r = 0; r < t.rails_; ++r) {
      const int chip = i * inst.chips + r;
      const auto [up, down] = t.add_duplex(chip, t.leaf(r, i), LinkKind::EfaPort, LinkKind::EfaPort, port,
                                           inst.efa.latency, fab.switch_latency);
      t.efa_up_[static_cast<std::size_t>(chip)] = up;
      t.efa_down_[static_cast<std::size_t>(chip)] = down;
    }
  }
}

}  // namespace trnsim::net
