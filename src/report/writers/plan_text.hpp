#pragma once
// The plan in one line, as the text and HTML reports print it:
// "TP 8 PP 4 DP 2, micro-batch 1 x 64, 1f1b, SP on, ZeRO-1, recompute selective"; "DP 64 (EP 8)"
// under expert parallelism; "TP 4 CP 8 PP 1 DP 2" under context parallelism.
#include <string>

#include <fmt/core.h>

#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

inline std::string plan_text(const workload::Plan& p) {
  return fmt::format("TP {}{} PP {} DP {}{}, micro-batch {} x {}, {}{}, SP {}, ZeRO-{}, recompute {}", p.tp,
                     p.cp > 1 ? fmt::format(" CP {}", p.cp) : std::string(), p.pp, p.dp,
                     p.ep > 1 ? fmt::format(" (EP {})", p.ep) : std::string(), p.micro_batch, p.micro_batches, schedule_name(p.schedule),
                     p.virtual_stages > 1 ? fmt::format(" (v={})", p.virtual_stages) : std::string(),
                     p.sequence_parallel ? "on" : "off", p.zero, recompute_name(p.recompute));
}

}  // namespace trnsim::report
