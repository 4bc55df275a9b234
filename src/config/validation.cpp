// Checks across the objects of an experiment: the parallel plan against the model and the
// cluster, the batch against the plan. The rules are workload's (workload::check_plan); this
// layer adds only the file name.
#include <fmt/core.h>

#include "json_reader.hpp"
#include "resolve.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::config::detail {

void validate(const Experiment& ex, const std::string& file) {
  const hw::ClusterSpec& c = ex.cluster;
  in_file(file, [&] {
    workload::check_plan(ex.model, ex.training, ex.parallelism, c.ranks(),
                         fmt::format("{} {} x {} ranks each", c.instances, c.instance.name, c.instance.ranks()));
  });
}

}  // namespace trnsim::config::detail
