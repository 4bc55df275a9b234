#pragma once
// Hand-built clusters for the net tests (figures chosen for easy arithmetic, not from presets).
#include <numeric>
#include <vector>

#include "trnsim/hw/specs.hpp"

namespace trnsim::test {

// Ranks from, from + 1, ..., from + n - 1: a collective's group.
inline std::vector<int> iota(int n, int from = 0) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

// A Trainium-like instance: X x Y torus, `cores` logical cores per chip.
inline hw::ClusterSpec torus_cluster(int x, int y, int cores, int instances) {
  hw::ClusterSpec c;
  c.instances = instances;
  auto& i = c.instance;
  i.name = "test-torus";
  i.chips = x * y;
  i.topology = hw::IntraTopology::Torus2D;
  i.torus_x = x;
  i.torus_y = y;
  i.chip.family = hw::Family::Trainium;
  i.chip.physical_cores = cores;
  i.chip.logical_core_size = 1;
  i.chip.hbm_bandwidth = 800e9;  // chip-local copies at 400 GB/s
  const int ports = (x > 1 ? 2 : 0) + (y > 1 ? 2 : 0);
  i.intra = {ports * 100e9, 1e-6};  // 100 GB/s and 1 us per link
  i.nics = i.chips;
  i.efa = {i.chips * 25e9, 10e-6};  // 25 GB/s per chip
  c.fabric.switch_latency = 1e-6;
  return c;
}

// The same in UltraServers of `per_ultraserver` instances joined by a Z ring of 256 GB/s and 2 us
// per instance (split over the ring's two directions where it has more than two instances).
inline hw::ClusterSpec ultraserver_cluster(int x, int y, int cores, int instances, int per_ultraserver) {
  hw::ClusterSpec c = torus_cluster(x, y, cores, instances);
  c.instance.ultraserver_instances = per_ultraserver;
  c.instance.ultraserver_link = {256e9, 2e-6};
  return c;
}

// A GPU node: `gpus` behind one NVSwitch, 100 GB/s and 1 us per GPU link.
inline hw::ClusterSpec gpu_cluster(int gpus, int nodes) {
  hw::ClusterSpec c;
  c.instances = nodes;
  auto& i = c.instance;
  i.name = "test-gpu";
  i.chips = gpus;
  i.topology = hw::IntraTopology::NvSwitch;
  i.chip.family = hw::Family::Gpu;
  i.chip.hbm_bandwidth = 2000e9;
  i.intra = {100e9, 1e-6};
  i.nics = gpus;
  i.efa = {gpus * 25e9, 10e-6};
  c.fabric.switch_latency = 1e-6;
  return c;
}

// Two 8-GPU nodes, one leaf per rail, one spine, uplinks an eighth of the leaf's ports:
// 2 x 25 GB/s / 8 = 6.25 GB/s. Ranks 0 -> 9 and 8 -> 1 both cross rail 0's uplink, 9 -> 0 and
// 1 -> 8 rail 1's.
inline hw::ClusterSpec crossing_cluster() {
  auto c = gpu_cluster(8, 2);
  c.fabric.spines = 1;
  c.fabric.leaf_radix = 2;
  c.fabric.oversubscription = 8;
  return c;
}

// trn3-like: servers of 4 chips behind a switch, 4 servers per UltraServer-instance.
inline hw::ClusterSpec switched_cluster(int instances) {
  hw::ClusterSpec c;
  c.instances = instances;
  auto& i = c.instance;
  i.name = "test-switched";
  i.chips = 16;
  i.chips_per_server = 4;
  i.topology = hw::IntraTopology::Switched;
  i.chip.family = hw::Family::Trainium;
  i.chip.physical_cores = 2;
  i.chip.logical_core_size = 1;
  i.chip.hbm_bandwidth = 800e9;
  i.intra = {256e9, 1e-6};
  i.ultraserver_link = {320e9, 2e-6};
  i.inter_rack_link = {128e9, 2e-6};
  i.nics = 16;
  i.efa = {16 * 50e9, 10e-6};
  c.fabric.switch_latency = 1e-6;
  return c;
}

}  // namespace trnsim::test
