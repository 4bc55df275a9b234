#pragma once
// Chrome trace event JSON of one simulated step, for Perfetto (ui.perfetto.dev) and chrome://tracing.
//
// Layout (README.md, "Open the trace in Perfetto"):
// - One process per traced rank: pid = rank, named "rank R: instance i / chip j / core k", sorted
//   by rank. One thread per stream the rank uses (compute, tp comm, dp comm, pp send/recv), with
//   tid = kTidPerRank x rank + stream + 1, unique across the trace (viewers key threads by tid).
// - A complete event ("X") per task: ts/dur in microseconds from the task's Span (start: it took
//   its stream; end: done), name = the Work's name, the collective op or "pp send", cat = its
//   category; args carry the task id, layer, micro-batch, chunk, FLOPs, bytes, op, group size.
// - A flow arrow ("s" -> "f", id = the Transfer's task id) from each pipeline send to the task
//   on the receiving rank that consumes it, when both ranks are traced.
// - Counters ("C"): per rank, the bus bandwidth its in-flight communication achieves; in an extra
//   "network" process (pid = ranks), the step-mean busy fraction and traffic per link kind.
// Symmetric runs simulate one rank per pipeline stage: a requested rank that was not simulated is
// traced as the simulated representative of its stage (TP 0, DP 0 of that stage), once.
#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/replay/step_simulation.hpp"

namespace trnsim::report {

inline constexpr std::int32_t kTidPerRank = 10;  // tid = 10 x rank + stream + 1: rank 12 compute = 121

struct TraceOptions {
  std::vector<std::int32_t> ranks;  // real ranks to trace; empty: one representative per pipeline stage
};

// "0-7,128" -> {0, ..., 7, 128}, ascending, duplicates removed. Contract: throws InputError
// ("--trace-ranks: expected ..., found ...") on bad syntax, an empty list, a reversed range or a
// rank outside [0, total_ranks). O(ranks listed).
std::vector<std::int32_t> parse_rank_list(std::string_view text, std::int32_t total_ranks);

// The ranks a trace shows: `requested` mapped to simulated ranks (a rank that was not simulated
// becomes its stage's representative), ascending and unique; empty `requested`: the representative
// of every pipeline stage. Throws InputError for a rank outside the cluster.
std::vector<std::int32_t> traced_ranks(const replay::StepRun& run, const std::vector<std::int32_t>& requested);

// Contract: writes the trace as one JSON object {"traceEvents": [...], "otherData": {"trnsim": ...}}
// to `out`, streaming (memory O(tasks of the traced ranks) for sorting, not per event).
// Deterministic: no wall-clock figures; the same inputs give byte-identical output. The caller
// checks `out` for write errors.
// O(T log T) for the T tasks of the traced ranks plus O(tasks) to select them.
void write_chrome_trace(std::ostream& out, const replay::StepInput& input, const replay::StepRun& run,
                        const TraceOptions& options);

// The same trace as a JSON value (small runs and tests; large runs should stream).
nlohmann::json chrome_trace(const replay::StepInput& input, const replay::StepRun& run, const TraceOptions& options);

}  // namespace trnsim::report
