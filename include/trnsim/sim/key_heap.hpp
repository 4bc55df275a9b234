#pragma once
// KeyHeap: a 4-ary min-heap of 16-byte event keys in one cache-line-aligned array; the near tier of
// EventQueue (which see for the keys' meaning). Four children of 16 bytes fill exactly one 64-byte
// line: the array starts 3 keys before a line boundary so that every sibling group is line-aligned
// (one line per level when the heap outgrows the cache, e.g. many events at one time). pop() defers
// its repair, so that a push() that follows (the hold pattern: pop, run a handler that schedules
// into the near window) does a single replace-top sift-down.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
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

// Allocates on 64-byte boundaries (one cache line), so that the heap layout above holds.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}  // NOLINT: allocator rebind
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

class KeyHeap {
 public:
  // Contract: an empty heap. Cost: one small allocation.
  KeyHeap() : keys_(kPad) {}

  bool empty() const { return size() == 0; }
  std::size_t size() const { return count() - (root_removed_ ? 1 : 0); }

  // Contract: adds key (keys are distinct). Cost: O(log n); allocates only to grow capacity.
  void push(const EventKey& key);

  // Contract: the smallest key. Precondition: !empty(). Cost: O(1), or the O(log n) completion
  // of a preceding pop() that no push() has absorbed.
  const EventKey& top() {
    settle();
    return base()[0];
  }

  // Contract: removes top(). Precondition: !empty(). Cost: O(1) now, the O(log n) repair deferred
  // to the next push() (done as a replace-top) or top().
  void pop() {
    settle();
    root_removed_ = true;
  }

  // Contract: replaces the content with [first, last) and restores the heap order.
  // Cost: O(n); allocates only to grow capacity.
  void assign(const EventKey* first, const EventKey* last) {
    root_removed_ = false;
    keys_.resize(kPad);
    keys_.insert(keys_.end(), first, last);
    make_heap();
  }

  // Contract: removes every key for which is_dead(slot), calling on_removed(slot) for each; keeps
  // the heap order of the rest. Returns how many were removed. Cost: O(n); never allocates.
  template <class IsDead, class OnRemoved>
  std::size_t remove_if(IsDead is_dead, OnRemoved on_removed) {
    settle();
    EventKey* h = base();
    const std::size_t n = count();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (is_dead(h[i].slot())) {
        on_removed(h[i].slot());
      } else {
        h[kept++] = h[i];
      }
    }
    keys_.resize(kPad + kept);
    make_heap();
    return n - kept;
  }

  // Contract: completes a pending pop(), after which keys() holds exactly the size() keys. O(log n).
  void settle() {
    if (root_removed_) fill_root();
  }
  // Contract: the keys in heap order; precondition: settled. Changing them must keep that order.
  EventKey* keys() { return base(); }

 private:
  static constexpr std::size_t kArity = 4;
  // Unused keys before the root: node i lives at keys_[i + 3], so the children 4i+1..4i+4 sit at
  // keys_[4(i+1) .. 4(i+1)+3], one aligned 64-byte line.
  static constexpr std::size_t kPad = 3;

  EventKey* base() { return keys_.data() + kPad; }
  const EventKey* base() const { return keys_.data() + kPad; }
  std::size_t count() const { return keys_.size() - kPad; }  // includes a popped root

  void fill_root();
  void make_heap();
  void sift_down(std::size_t hole, EventKey key);

  std::vector<EventKey, CacheLineAllocator<EventKey>> keys_;
  bool root_removed_ = false;  // pop() left the root in place, marked removed
};

}  // namespace trnsim::sim
