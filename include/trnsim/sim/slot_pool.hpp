#pragma once
// SlotPool<T>: records addressed by a 32-bit slot, for state that lives from the start of
// something to its completion (an engine event, a network call, a flow), so that steady-state use
// does not allocate. The engine's event records, the flow model's calls, the flow solver's flows
// and the replay's multi-group joins (NetCommunicator) use it.
//
// Contract:
//  - Records sit in chunks of 2^ChunkBits and never move: a reference stays valid while more
//    slots are acquired (a running event handler may schedule).
//  - acquire() reuses the most recently released slot (last in, first out); with none released it
//    takes the lowest slot never used. So slot numbers follow the order of use, whatever the chunk
//    size.
//  - acquire() allocates only when every slot is in use (one chunk, and room in the free list for
//    all of its slots); release() never allocates, so it may be called from noexcept code.
//  - A record is value-initialised once, with its chunk, and then reused as it was left: acquire
//    and release move slot numbers only; the owner resets what it needs. Releasing a slot twice,
//    or one never acquired, is a caller bug the pool does not detect.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "trnsim/error.hpp"

namespace trnsim::sim {

template <class T, unsigned ChunkBits = 10>
class SlotPool {
 public:
  using Slot = std::uint32_t;
  static_assert(ChunkBits >= 1 && ChunkBits <= 20, "a chunk holds 2 to 2^20 records");
  static constexpr Slot kChunkSize = Slot{1} << ChunkBits;

  SlotPool() = default;
  // Handlers and listeners hold slot numbers and references into the pool: it never moves.
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;

  // Contract: a slot not in use (see the reuse order above). O(1); allocates one chunk when every
  // slot is in use; throws InternalError beyond 2^32 slots.
  Slot acquire() {
    if (free_.empty()) grow();
    const Slot s = free_.back();
    free_.pop_back();
    return s;
  }

  // Contract: `s` (acquired and not yet released) is free again. O(1), never allocates.
  void release(Slot s) noexcept { free_.push_back(s); }

  T& operator[](Slot s) { return chunks_[s >> ChunkBits][s & (kChunkSize - 1)]; }
  const T& operator[](Slot s) const { return chunks_[s >> ChunkBits][s & (kChunkSize - 1)]; }

  // Whether `s` names an allocated record (in use or not). O(1).
  bool holds(Slot s) const { return (s >> ChunkBits) < chunks_.size(); }
  // Records allocated: every slot below it is valid for operator[]. O(1).
  std::size_t capacity() const { return chunks_.size() * std::size_t{kChunkSize}; }
  // Slots acquired and not released. O(1).
  std::size_t in_use() const { return capacity() - free_.size(); }

 private:
  void grow() {
    const std::size_t first = capacity();
    if (first + kChunkSize > std::size_t{std::numeric_limits<Slot>::max()}) {
      throw InternalError("sim::SlotPool: more than 2^32 slots needed");
    }
    chunks_.push_back(std::make_unique<T[]>(kChunkSize));
    // Room for every slot, so that release() never allocates.
    free_.reserve(first + kChunkSize);
    // Highest first, so that the lowest new slot is taken first.
    for (std::size_t i = kChunkSize; i-- > 0;) free_.push_back(static_cast<Slot>(first + i));
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<Slot> free_;  // the top is the next slot acquire() returns
};

}  // namespace trnsim::sim
