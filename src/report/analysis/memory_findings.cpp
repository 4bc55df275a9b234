// The out_of_memory rule: one finding per stage over its HBM share, naming the dominant term.
#include <array>
#include <string_view>

#include <fmt/core.h>

#include "trnsim/report/analysis/findings.hpp"
#include "trnsim/units.hpp"

namespace trnsim::report {
namespace {

using units::kGiB;

struct Term {
  std::string_view name;
  double bytes;
};

std::string remedy(std::string_view term, const workload::Plan& p) {
  if (term == "activations") {
    return fmt::format("{}{}a smaller training.micro_batch (now {}), or more tp / pp",
                       p.recompute == workload::Recompute::Full
                           ? std::string()
                           : fmt::format("parallelism.recompute={} (now {}), ",
                                         p.recompute == workload::Recompute::None ? "selective" : "full",
                                         recompute_name(p.recompute)),
                       p.sequence_parallel || p.tp == 1 ? "" : "parallelism.sequence_parallel=true, ", p.micro_batch);
  }
  if (term == "optimizer states") {
    return p.zero == 0 ? "parallelism.zero=1 shards the optimizer states over the dp ranks"
                       : "more dp (ZeRO-1 shards over it), tp or pp";
  }
  if (term == "embedding/logits") {
    return fmt::format("more tp (vocabulary-parallel logits) or a smaller training.micro_batch (now {})", p.micro_batch);
  }
  if (term == "workspace") return "more tp, or sequence parallelism";
  return "more tp or pp: fewer parameters per rank";  // weights, gradients
}

}  // namespace

std::vector<Finding> memory_findings(const StepReport& r) {
  std::vector<Finding> out;
  for (const StageMemoryReport& m : r.memory) {
    if (m.fits()) continue;
    const workload::StageMemory& s = m.memory;
    const std::array<Term, 6> terms = {{{"weights", s.weights},
                                        {"gradients", s.gradients},
                                        {"optimizer states", s.optimizer},
                                        {"activations", s.activations},
                                        {"embedding/logits", s.embedding_logits},
                                        {"workspace", s.workspace}}};
    const Term* top = &terms[0];
    for (const Term& t : terms) {
      if (t.bytes > top->bytes) top = &t;
    }
    out.push_back({"out_of_memory",
                   fmt::format("stage {} needs {:.2f} GiB per rank of {:.2f} GiB; {} dominate with {:.2f} GiB "
                               "({:.0f} %) (weights {:.2f}, gradients {:.2f}, optimizer {:.2f}, activations {:.2f}, "
                               "embedding/logits {:.2f}, workspace {:.2f})",
                               s.stage, s.total() / kGiB, m.capacity / kGiB, top->name, top->bytes / kGiB,
                               100 * top->bytes / s.total(), s.weights / kGiB, s.gradients / kGiB,
                               s.optimizer / kGiB, s.activations / kGiB, s.embedding_logits / kGiB,
                               s.workspace / kGiB),
                   0, remedy(top->name, r.plan)});
  }
  return out;
}

}  // namespace trnsim::report
