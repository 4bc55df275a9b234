#include <catch2/catch.hpp>

#include "trnsim/error.hpp"
#include "trnsim/hw/device_map.hpp"

using namespace trnsim;

TEST_CASE("device map: ranks nest as core, chip, instance, UltraServer") {
  hw::ClusterSpec c;
  c.instances = 8;
  c.instance.chips = 16;
  c.instance.ultraserver_instances = 4;
  c.instance.chip.physical_cores = 8;
  c.instance.chip.logical_core_size = 2;  // trn2 LNC=2: 4 logical cores per chip
  const hw::DeviceMap dm(c);
  CHECK(dm.ranks() == 8 * 16 * 4);
  CHECK(dm.ultraservers() == 2);
  // Rank 300: chip 300/4 = 75 (core 0), instance 75/16 = 4 (chip 11), UltraServer 4/4 = 1 (instance 0).
  const auto loc = dm.locate(300);
  CHECK(loc.core_in_chip == 0);
  CHECK(loc.chip == 75);
  CHECK(loc.chip_in_instance == 11);
  CHECK(loc.instance == 4);
  CHECK(loc.instance_in_ultraserver == 0);
  CHECK(loc.ultraserver == 1);
  CHECK(dm.locate(7).core_in_chip == 3);
  CHECK_THROWS_AS(dm.locate(512), InputError);
  CHECK_THROWS_AS(dm.locate(-1), InputError);
}

TEST_CASE("device map: GPUs are one rank each") {
  hw::ClusterSpec c;
  c.instances = 2;
  c.instance.chips = 8;
  c.instance.chip.family = hw::Family::Gpu;
  c.instance.chip.physical_cores = 1;
  const hw::DeviceMap dm(c);
  CHECK(dm.ranks() == 16);
  CHECK(dm.locate(9).instance == 1);
  CHECK(dm.locate(9).chip_in_instance == 1);
}
