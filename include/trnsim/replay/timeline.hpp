#pragma once
// Timeline: when every task of a StepGraph ran. Indexed by task id, so reports can join a span with
// its task (rank, stream, category, layer, micro-batch).
#include <cstdint>
#include <vector>

#include "trnsim/sim/time.hpp"

namespace trnsim::replay {

// A collective member's [start, active) is its wait for the call's other members; the reports
// charge only [active, end) to communication (report/analysis/breakdown.hpp, critical_path.hpp).
struct Span {
  sim::Time start;   // the task took its stream (a collective member: it reached the call)
  sim::Time active;  // work began: compute start, or the collective/transfer started on the network
  sim::Time end;     // done; its stream is free again
};

struct Timeline {
  std::vector<Span> spans;  // spans[task id]
  sim::Time step_time;      // the latest end of any task
  std::uint64_t events = 0; // engine events processed
  // Where the replay was asked to set micro-batches aside (ExecutorOptions::aside_lo, aside_hi):
  // whether it could (the network counts their calls apart, every call's members are all in or
  // all out, and each engine event ran one task's or call's completion), and the events that
  // completed their tasks and calls.
  bool set_aside = false;
  std::uint64_t events_aside = 0;
};

}  // namespace trnsim::replay
