// The --instance and --nodes options of `collective` and `topology` (command.hpp).
#include <algorithm>

#include "command.hpp"
#include "trnsim/config/presets.hpp"

namespace trnsim::cli {

void ClusterOption::add_to(CLI::App& sub) {
  sub.add_option("--instance", instance, "Instance preset (trnsim presets lists them)")->required();
  // The range of an experiment's cluster.count (configs/README.md, "Ranges").
  sub.add_option("--nodes", nodes, "Instances (default: one instance, or one UltraServer)")->check(integers_in(1, 1 << 20, false));
}

int ClusterOption::instances() const {
  return nodes > 0 ? nodes : std::max(1, config::load_instance(instance).ultraserver_instances);
}

}  // namespace trnsim::cli
