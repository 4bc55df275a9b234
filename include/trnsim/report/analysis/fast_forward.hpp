#pragma once
// A StepReport of a plan fast-forwarded over its pipeline's steady state (replay/fast_forward.hpp):
// the two reduced runs' reports (M2 replayed; M1 replayed, or derived from M2 where the network
// allows: replay::derive_first, cut_first), every additive figure moved k = (M - M1) / d times its change
// from M1 to M2 micro-batches: the step time (exact, in picoseconds), the bottleneck rank's
// breakdown parts (the bottleneck: the rank with the most compute, extrapolated in picoseconds
// where report::rank_compute_times applies, else from every rank's parts), engine, op-class,
// HBM-bound, MoE and CP seconds, stage compute, hardware FLOPs, link bytes and busy time, task and
// event counts, and the critical path's counts and seconds (by category, rank and contributor).
// What follows from the plan is taken from the real plan, not extrapolated: the plan itself,
// memory (workload::estimate_memory), model FLOPs, the expert load; throughput, MFU, HFU and link
// busy fractions are recomputed from the extrapolated figures, and the findings are judged again
// on them. Wall-clock seconds are the two runs' (a derived M1's: its build or cut, no replay).
#include <memory>
#include <optional>

#include "trnsim/net/fabric.hpp"
#include "trnsim/replay/fast_forward.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

// Contract: the report of the real plan `resolved` from `runs`, or nullopt when the two runs do
// not line up (different simulated ranks or links): the caller replays the real plan. Throws
// InternalError when options.critical_path asks for a critical path and runs.first has no
// dependency edges (replay::FirstGraph::TasksOnly). `runs` is taken whole (moved in by
// simulate_and_analyze): M1's link list becomes the real step's, written over, not copied.
std::optional<StepReport> extrapolate_report(const replay::StepInput& input, const workload::ResolvedPlan& resolved,
                                             replay::FastForwardRuns runs, const AnalyzeOptions& options = {});

// Contract: the report of `resolved` (every field set) on `input`: fast-forwarded
// (StepReport::fast_forward) when `fast_forward` is on, the plan's shape allows it and the
// repetition is exact (M1 built where options.critical_path needs its edges, else cut from M2:
// replay::FirstGraph); else analyze of the full replay. Deterministic. Throws what
// prepare_step / replay_step throw. `fabric` as in replay_step.
StepReport simulate_and_analyze(const replay::StepInput& input, const workload::ResolvedPlan& resolved,
                                bool fast_forward, const AnalyzeOptions& options = {},
                                std::shared_ptr<net::Fabric> fabric = {});

}  // namespace trnsim::report
