#pragma once
// How a collective library chooses its algorithm (software presets' "collectives" block).
// Neuron's runtime switches by message size (mesh, then recursive doubling-halving, then ring
// variants; hierarchical across instances), NCCL by its own thresholds; the analytic optimum is a
// what-if ("optimal"), not the default (docs/architecture.md, "Facts, calibration and data").
// ClosedForm::choose applies it to every collective whose algorithm is Auto.
#include <string>
#include <vector>

#include "trnsim/net/collective.hpp"

namespace trnsim::net {

// One line of the library's choice table: for `op`, messages up to `max_bytes` (inclusive) run
// `within_instance` when the group stays inside one instance, else `across_instances`.
struct AlgorithmRule {
  CollectiveOp op = CollectiveOp::AllReduce;
  double max_bytes = 0;  // +infinity for the last line of an op
  Algorithm within_instance = Algorithm::Ring;
  Algorithm across_instances = Algorithm::Hierarchical;
};

// One release of the library's runtime (its file's "releases"): the fixed costs of a collective
// and the fraction of the chip's DMA data path one stream sustains, fitted on that release's
// benchmark tables and the same on every chip the release runs on (hw::Calibration says how
// they become the cluster's figures).
struct RuntimeRelease {
  std::string name;  // the first SDK version it models, "2.9"
  double launch_s = 0, step_s = 0, message_s = 0;
  double stream_efficiency = 1;  // of hw::ChipSpec::collective_stream_dma
  std::string source;
};

struct CollectivePolicy {
  std::string library;            // "neuron-runtime", "nccl"; empty: no library (every op optimal)
  bool optimal = false;           // true: the analytic optimum over every algorithm (what-if)
  std::vector<AlgorithmRule> rules;  // per op, ascending max_bytes; an op without rules: optimal
  std::string source;
  std::vector<RuntimeRelease> releases;  // the library's, oldest first; empty: the hardware states the figures
  std::string release;                   // the one the software runs (one of `releases`), or empty
  // The names of `releases`, for messages. O(releases).
  std::vector<std::string> release_names() const {
    std::vector<std::string> names;
    for (const RuntimeRelease& r : releases) names.push_back(r.name);
    return names;
  }
  // The release the software runs, or nullptr. O(releases).
  const RuntimeRelease* runtime() const {
    for (const RuntimeRelease& r : releases)
      if (r.name == release) return &r;
    return nullptr;
  }

  // Contract: what the library runs for `op` on `bytes` (within one instance, or across when
  // `spans_instances`): the first rule of `op` whose max_bytes >= bytes; Optimal when `optimal`
  // is set or no rule of `op` covers the size. O(rules).
  Algorithm choice(CollectiveOp op, double bytes, bool spans_instances) const {
    if (optimal) return Algorithm::Optimal;
    for (const AlgorithmRule& r : rules) {
      if (r.op == op && bytes <= r.max_bytes) return spans_instances ? r.across_instances : r.within_instance;
    }
    return Algorithm::Optimal;
  }
};

}  // namespace trnsim::net
