#pragma once
// Executor: runs a StepGraph on the event engine. Each simulated rank has one stream per
// workload::Stream kind; a task starts when its dependency count reaches zero and its stream is
// free (ready tasks queue per stream in the order they became ready). A collective call starts on
// the network when every simulated member task (same Task::call) has reached it; its members hold
// their streams until it ends (Span::start: the member reached the call; Span::active: the call
// started on the network, so [start, active) is time spent waiting for the other members).
//
// Compute and communication interact while a rank has a collective or transfer on the network.
// GPUs run NCCL on their SMs: compute runs at rate 1 / `comm_compute_slowdown` while the rank has
// anything on the network (however many calls; two overlapping collectives count once), at rate 1
// otherwise. Trainium runs collectives on dedicated cores, but their DMA traffic shares the chip's
// HBM: while the rank's collectives ask D bytes/s of HBM, compute is priced with H / (H + D) of
// the rank's HBM bandwidth H: compute (which alone could use all of H) and the collectives share
// it in proportion to what each asks, so the share stays above 1/2 while D < H and degrades
// smoothly beyond (on trn2, a TP all-reduce inside a chip asks about 2.4 H). The collectives' own
// slowdown is not modelled. Both are rates, not durations fixed at a task's start: when the
// rank's network activity changes during a compute task, the task keeps the fraction of its work
// already done and runs the rest at the new rate (its completion event is cancelled and
// rescheduled), so a task is slowed exactly for the part of it that overlaps communication.
#include <cstdint>
#include <functional>
#include <span>

#include "trnsim/error.hpp"
#include "trnsim/replay/communicator.hpp"
#include "trnsim/replay/timeline.hpp"
#include "trnsim/sim/engine.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::replay {

// D for one collective member: every byte a rank sends is read from HBM and every byte it
// receives is written there (a ring or halving-doubling rank receives what it sends), and a
// reducing collective (all-reduce, reduce-scatter) also reads its local operand once:
// HBM bytes = (2 x bus factor + r) x size, r = (n-1)/n when reducing, else 0, spread over the
// collective's expected (closed-form) time. Compute keeps H / (H + min(D, H)) of H: the network's
// figures set D, which an HBM far slower than the DMA engines (0.001 GB/s against 3,500) would
// put orders of magnitude above H, while the collectives cannot draw more than H.
struct HbmSharing {
  double rank_hbm_bytes_per_s = 0;  // H: the rank's sustained HBM bandwidth; 0 = not modelled
  // Duration of StepGraph::works[work] when compute keeps `share` (0, 1] of H. Called when a
  // compute task starts while its rank communicates, and again whenever D changes during it.
  std::function<double(std::uint32_t work, double share)> task_seconds;
};

struct ExecutorOptions {
  double comm_compute_slowdown = 1.0;  // hw::Calibration::comm_compute_slowdown
  HbmSharing hbm_sharing;
  // Micro-batches [aside_lo, aside_hi) whose network calls are set aside (Communicator::set_aside)
  // and whose completion events are counted apart (Timeline::set_aside, events_aside): what a
  // fast-forward derives a replay without them from (fast_forward.hpp). Empty: none.
  std::int64_t aside_lo = 0, aside_hi = 0;
};

// HBM bytes one member of `op` over `ranks` ranks moves for a collective of `bytes` (HbmSharing).
double collective_hbm_bytes(workload::CollectiveOp op, int ranks, double bytes);

// What execute throws when tasks are left waiting at the end: a collective member held its stream
// ahead of a task its call waits for. build_step's graphs never do (an internal error); a trace
// can, and simulate_trace names the trace's nodes instead (an input error).
class StuckError : public InternalError {
 public:
  static constexpr workload::TaskId kNone = 0xffffffffu;
  // What blocks: a collective member holding its stream (`holder`), one member of its call that
  // never reached it (`missing`), and why: `missing_behind`, the task holding the missing member's
  // stream, or kNone when it still waits for `missing_deps` dependencies. kNone where not found.
  struct Blocker {
    workload::TaskId holder = kNone, missing = kNone, missing_behind = kNone;
    std::uint32_t missing_deps = 0;
  };
  StuckError(const std::string& message, workload::TaskId task, std::size_t waiting, Blocker blocker)
      : InternalError(message), task_(task), waiting_(waiting), blocker_(blocker) {}
  workload::TaskId task() const { return task_; }  // the first task left waiting
  std::size_t waiting() const { return waiting_; }  // how many never ran
  const Blocker& blocker() const { return blocker_; }

 private:
  workload::TaskId task_;
  std::size_t waiting_;
  Blocker blocker_;
};

// Contract: simulates `graph` from the engine's now() until no task is left; work_seconds[i] is
// the duration of StepGraph::works[i] on one rank (cost::ComputeModel, or a trace's measurement).
// When tasks are left waiting at the end, throws workload::CycleError (an InternalError) naming
// the tasks of a dependency cycle, collective calls included (workload/step_graph_order.hpp), if
// the graph has one (its tasks never become ready, so the replay itself ends); else throws
// StuckError (an InternalError) naming the first task still left waiting at the end and the
// collective member holding its stream ahead of a task its call waits for. Cost: O(tasks + edges) plus the engine's and
// network's work, plus O(streams) per change of a rank's network activity and one cancelled and
// rescheduled event per compute task whose rate it changes.
Timeline execute(sim::Engine& engine, const workload::StepGraph& graph,
                 std::span<const double> work_seconds, Communicator& comm,
                 const ExecutorOptions& options = {});

}  // namespace trnsim::replay
