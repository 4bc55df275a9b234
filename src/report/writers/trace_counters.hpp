#pragma once
// Counter tracks ("ph":"C") of the Chrome trace: what the run says about bandwidth over time.
// Internal to src/report; the meaning of each counter is in counter_notes() and README.md.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace_events.hpp"
#include "trnsim/replay/step_simulation.hpp"

namespace trnsim::report::trace {

// "busbw GB/s" on the rank's process: per communication stream, the bus bandwidth (nccl-tests
// definition: bytes x bus factor / time) of the collective or send it has on the network, sampled
// at every start and end, 0 while idle. `tasks`: the rank's tasks. O(t log t) for its t tasks.
void write_rank_counters(EventStream& events, const workload::StepGraph& graph, const std::vector<replay::Span>& spans,
                         std::int32_t rank, const std::vector<workload::TaskId>& tasks);

// "link busy % (step mean)" and "link traffic GB/s (step mean)" on process `pid`: per link kind,
// StepRun::links totals over the step, constant from 0 to the step time. O(links).
void write_network_counters(EventStream& events, const replay::StepRun& run, std::int32_t pid);

// What each counter means, for the trace's otherData.
nlohmann::json counter_notes();

}  // namespace trnsim::report::trace
