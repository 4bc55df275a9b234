#include "trnsim/hw/device_map.hpp"

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::hw {

DeviceMap::DeviceMap(const ClusterSpec& cluster)
    : ranks_per_chip_(cluster.instance.chip.family == Family::Gpu ? 1 : cluster.instance.chip.logical_cores()),
      chips_per_instance_(cluster.instance.chips),
      instances_(cluster.instances),
      instances_per_ultraserver_(cluster.instance.ultraserver_instances < 1 ? 1 : cluster.instance.ultraserver_instances) {
  if (ranks_per_chip_ < 1 || chips_per_instance_ < 1 || instances_ < 1) {
    throw InputError(fmt::format("cluster of {} x {}: no ranks ({} logical cores per chip, {} chips per instance)",
                                 instances_, cluster.instance.name, ranks_per_chip_, chips_per_instance_));
  }
  ranks_ = ranks_per_chip_ * chips_per_instance_ * instances_;
}

void DeviceMap::throw_outside(int rank) const {
  throw InputError(fmt::format("rank {} outside the cluster's ranks [0, {})", rank, ranks_));
}

DeviceLocation DeviceMap::locate(int rank) const {
  check(rank);
  DeviceLocation loc;
  loc.rank = rank;
  loc.core_in_chip = rank % ranks_per_chip_;
  loc.chip = rank / ranks_per_chip_;
  loc.chip_in_instance = loc.chip % chips_per_instance_;
  loc.instance = loc.chip / chips_per_instance_;
  loc.instance_in_ultraserver = loc.instance % instances_per_ultraserver_;
  loc.ultraserver = loc.instance / instances_per_ultraserver_;
  return loc;
}

}  // namespace trnsim::hw
