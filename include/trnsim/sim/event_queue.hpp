#pragma once
// EventQueue: the engine's pending set, a 4-ary min-heap of 16-byte keys (time, seq, slot) in one
// contiguous vector. It knows nothing about handlers: the slot names the engine's event record.
// Order is time, then insertion sequence (seq), so events at equal times pop first-in first-out and
// the order never depends on addresses. seq is 32 bits to keep a key at 16 bytes (four children
// share one 64-byte cache line); when the counter reaches its limit the queue renumbers the keys it
// holds in their current order (O(n log n), once every ~4e9 pushes), so the order is unaffected.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "trnsim/sim/time.hpp"

namespace trnsim::sim {

struct EventKey {
  Time::Rep time = 0;       // picoseconds
  std::uint64_t order = 0;  // seq << 32 | slot: seq breaks time ties, slot rides along
  std::uint32_t slot() const { return static_cast<std::uint32_t>(order); }
  std::uint32_t seq() const { return static_cast<std::uint32_t>(order >> 32); }
};

inline bool operator<(const EventKey& a, const EventKey& b) {
  return a.time < b.time || (a.time == b.time && a.order < b.order);
}

class EventQueue {
 public:
  static constexpr std::uint32_t kDefaultSeqLimit = std::numeric_limits<std::uint32_t>::max();

  // Contract: an empty queue; seq_limit (> 1) is where the sequence counter renumbers (tests use a
  // small one). Cost: O(1), no allocation.
  explicit EventQueue(std::uint32_t seq_limit = kDefaultSeqLimit);

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  // Contract: adds (t, slot) after every key already held at time t. Throws InternalError when
  // seq_limit keys are already held. Cost: O(log n) amortised; allocates only to grow capacity.
  void push(Time t, std::uint32_t slot);

  // Contract: the smallest key (earliest time, then first pushed). Precondition: !empty(). O(1).
  const EventKey& top() const { return heap_[0]; }

  // Contract: removes top(). Precondition: !empty(). Cost: O(log n), never allocates.
  void pop();

  // Contract: removes every key whose slot satisfies is_dead(slot), calling on_removed(slot) for
  // each, and keeps the others in order. Cost: O(n) plus the calls; never allocates.
  template <class IsDead, class OnRemoved>
  void remove_if(IsDead is_dead, OnRemoved on_removed) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < heap_.size(); ++i) {
      if (is_dead(heap_[i].slot())) {
        on_removed(heap_[i].slot());
      } else {
        heap_[kept++] = heap_[i];
      }
    }
    heap_.resize(kept);
    make_heap();
  }

  // Contract: capacity for n keys, so that pushes up to n never allocate. Cost: O(n) once.
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static constexpr std::size_t kArity = 4;

  void renumber();
  void make_heap();
  void sift_down(std::size_t hole, EventKey key);

  std::vector<EventKey> heap_;
  std::uint32_t next_seq_ = 0;
  std::uint32_t seq_limit_;
};

}  // namespace trnsim::sim
