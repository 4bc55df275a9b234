#include "trnsim/sim/event_queue.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "trnsim/error.hpp"

namespace trnsim::sim {

namespace {
std::uint64_t make_order(std::uint32_t seq, std::uint32_t slot) {
  return (std::uint64_t{seq} << 32) | slot;
}
}  // namespace

EventQueue::EventQueue(std::uint32_t seq_limit) : seq_limit_(seq_limit) {
  if (seq_limit < 2) throw InternalError("sim::EventQueue: seq_limit must be at least 2");
}

void EventQueue::push(Time t, std::uint32_t slot) {
  if (next_seq_ == seq_limit_) renumber();
  const EventKey key{t.picoseconds(), make_order(next_seq_++, slot)};
  // Sift up: move the hole towards the root while the parent is later than the new key.
  std::size_t hole = heap_.size();
  heap_.push_back(key);
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!(key < heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = key;
}

void EventQueue::pop() {
  const EventKey last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

// Moves the hole at `hole` down to where `key` belongs, then stores key there.
void EventQueue::sift_down(std::size_t hole, EventKey key) {
  const std::size_t n = heap_.size();
  EventKey* h = heap_.data();
  for (;;) {
    const std::size_t first = hole * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    if (first + kArity <= n) {
      // All four children exist: a two-level tournament keeps the comparison chain short.
      const std::size_t a = h[first + 1] < h[first] ? first + 1 : first;
      const std::size_t b = h[first + 3] < h[first + 2] ? first + 3 : first + 2;
      best = h[b] < h[a] ? b : a;
    } else {
      for (std::size_t c = first + 1; c < n; ++c) {
        if (h[c] < h[best]) best = c;
      }
    }
    if (!(h[best] < key)) break;
    h[hole] = h[best];
    hole = best;
  }
  h[hole] = key;
}

void EventQueue::make_heap() {
  const std::size_t n = heap_.size();
  if (n < 2) return;
  for (std::size_t i = (n - 2) / kArity + 1; i-- > 0;) sift_down(i, heap_[i]);
}

// Gives the held keys the sequence numbers 0..n-1 in pop order. A sorted array is a valid heap.
void EventQueue::renumber() {
  std::sort(heap_.begin(), heap_.end());
  if (heap_.size() >= seq_limit_) {
    throw InternalError(
        fmt::format("sim::EventQueue: cannot hold more than {} pending events", seq_limit_));
  }
  std::uint32_t seq = 0;
  for (EventKey& k : heap_) k.order = make_order(seq++, k.slot());
  next_seq_ = seq;
}

}  // namespace trnsim::sim
