#pragma once
// Device numbering of a cluster: rank -> logical core -> chip -> instance -> UltraServer.
// Ranks are logical NeuronCores on Trainium (LNC groups of physical cores) and GPUs on GPU presets.
// Numbering is dense and nested: the cores of a chip are consecutive ranks, the chips of an
// instance consecutive chips, the instances of an UltraServer consecutive instances.
#include "trnsim/hw/specs.hpp"

namespace trnsim::hw {

struct DeviceLocation {
  int rank = 0;
  int core_in_chip = 0;   // logical core index inside its chip (GPU: 0)
  int chip = 0;           // global chip index
  int chip_in_instance = 0;
  int instance = 0;       // global instance index
  int instance_in_ultraserver = 0;
  int ultraserver = 0;    // global UltraServer index (instances / ultraserver_instances groups)
};

class DeviceMap {
 public:
  // Contract: throws InputError if the cluster has no ranks (zero chips, cores or instances).
  explicit DeviceMap(const ClusterSpec& cluster);

  int ranks() const { return ranks_; }
  int ranks_per_chip() const { return ranks_per_chip_; }
  int ranks_per_instance() const { return ranks_per_chip_ * chips_per_instance_; }
  int chips() const { return chips_per_instance_ * instances_; }
  int chips_per_instance() const { return chips_per_instance_; }
  int instances() const { return instances_; }
  int instances_per_ultraserver() const { return instances_per_ultraserver_; }
  int ultraservers() const { return (instances_ + instances_per_ultraserver_ - 1) / instances_per_ultraserver_; }

  // O(1). Throws InputError for a rank outside [0, ranks()).
  DeviceLocation locate(int rank) const;
  // locate(rank).chip and .instance, one division each: routing asks for them per transfer, and
  // the six divisions of a full locate were a twentieth of a 65,536-chip run.
  int chip_of(int rank) const {
    check(rank);
    return rank / ranks_per_chip_;
  }
  int instance_of(int rank) const {
    check(rank);
    return rank / ranks_per_instance();
  }
  // The first rank of a chip (its logical core 0).
  int first_rank_of_chip(int chip) const { return chip * ranks_per_chip_; }

 private:
  void check(int rank) const {
    if (rank < 0 || rank >= ranks_) [[unlikely]] throw_outside(rank);
  }
  [[noreturn]] void throw_outside(int rank) const;

  int ranks_per_chip_ = 1;
  int chips_per_instance_ = 1;
  int instances_ = 1;
  int instances_per_ultraserver_ = 1;
  int ranks_ = 1;
};

}  // namespace trnsim::hw
