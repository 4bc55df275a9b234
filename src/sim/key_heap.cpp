#include "trnsim/sim/key_heap.hpp"

namespace trnsim::sim {

void KeyHeap::push(const EventKey& key) {
  if (root_removed_) {
    // The root was popped: the new key takes its place and sinks (replace-top).
    root_removed_ = false;
    sift_down(0, key);
    return;
  }
  keys_.push_back(key);
  // Sift up: move the hole towards the root while the parent is later than the new key.
  EventKey* h = base();
  std::size_t hole = count() - 1;
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!(key < h[parent])) break;
    h[hole] = h[parent];
    hole = parent;
  }
  h[hole] = key;
}

// Completes a pop(): the last key fills the root and sinks.
void KeyHeap::fill_root() {
  root_removed_ = false;
  const EventKey last = keys_.back();
  keys_.pop_back();
  if (count() > 0) sift_down(0, last);
}

// Moves the hole at `hole` down to where `key` belongs, then stores key there.
void KeyHeap::sift_down(std::size_t hole, EventKey key) {
  const std::size_t n = count();
  EventKey* h = base();
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

void KeyHeap::make_heap() {
  const std::size_t n = count();
  if (n < 2) return;
  EventKey* h = base();
  for (std::size_t i = (n - 2) / kArity + 1; i-- > 0;) sift_down(i, h[i]);
}

}  // namespace trnsim::sim
