#pragma once
// Per-stage order of forward and backward micro-batch units under a pipeline schedule.
//   GPipe:       all forwards, then all backwards (micro-batches in order).
//   1F1B:        min(pp - stage - 1, m) warm-up forwards, then one forward / one backward pairs,
//                then the remaining backwards (PipeDream-Flush, Narayanan et al. 2021).
//   Interleaved: Megatron-LM's interleaved 1F1B over v model chunks: warm-up
//                min(2 (pp - stage - 1) + (v - 1) pp, m v) units; unit k runs chunk
//                (k mod pp v) / pp (reversed for backwards) of micro-batch (k / pp v) pp + k mod pp.
// Chunk c of stage p holds virtual stage c * pp + p; its layers follow Plan's split rule (plan.hpp).
#include <cstdint>
#include <vector>

#include "trnsim/workload/specs.hpp"

namespace trnsim::workload {

struct ScheduleUnit {
  bool forward = true;
  std::int32_t micro_batch = 0;
  std::int32_t chunk = 0;  // model chunk on this stage (0 unless interleaved)
};

// Contract: micro_batches >= 1; interleaved with virtual_stages > 1 needs micro_batches % pp == 0.
// O(micro_batches * virtual_stages).
std::vector<ScheduleUnit> stage_schedule(PipelineSchedule schedule, std::int64_t pp, std::int64_t stage,
                                         std::int64_t micro_batches, std::int64_t virtual_stages);

// Largest number of units whose forward has run and backward has not (activations held), over the
// order: what the memory model multiplies a chunk's activations by.
std::int64_t peak_units_in_flight(const std::vector<ScheduleUnit>& order);

// The same peak with each unit weighted by chunk_weight[unit.chunk] (e.g. the chunk's layers,
// which differ under an uneven split): the largest sum of weights of units in flight.
double peak_weight_in_flight(const std::vector<ScheduleUnit>& order, const std::vector<double>& chunk_weight);

}  // namespace trnsim::workload
