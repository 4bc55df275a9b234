#pragma once
// EventQueue: the engine's pending set. Keys are (time, seq, slot) in 16 bytes; order is time, then
// insertion sequence (seq), so events at equal times pop first-in first-out and the order never
// depends on addresses. The slot names the engine's event record; the queue knows nothing else.
//
// Shape (two tiers, after the ladder and calendar queues):
//   near_     a small KeyHeap holding every key with time < near_end_, popped in exact order;
//   buckets_  unsorted vectors, bucket i holding times in [base + i*w, base + (i+1)*w), w = 2^shift;
//   overflow_ an unsorted vector of the keys at or after the buckets' end (far_end_).
// A push appends to its bucket or to overflow_ (O(1)) unless it falls in the near window. When
// near_ empties, the next non-empty bucket is heapified into it; when the buckets run out, the
// earliest three quarters of overflow_ are spread over fresh buckets sized for about
// kKeysPerBucket keys each where keys are densest. A key is moved a few times at most, so a hold
// costs O(1) amortised plus a heap operation on a near_ of about kKeysPerBucket keys in cache.
// Why: on the hold benchmark (tools/bench/engine_hold.cpp, 1e5 pending, exponential increments) a
// single heap of 1e5 keys, binary or 4-ary and cache-line aligned, missed cache on every level and
// stayed near 5-7 million events/s on the development machine; this queue roughly doubles that.
// A small queue is neither: an empty queue starts as small_, an array of at most kSmall keys in
// pop order (a push moves the keys on its nearer side by one slot, a pop advances the head),
// until a push finds it full; then its keys spill into overflow_ and the tiers serve until the
// queue is empty again. Why: a replay keeps only as many events pending as it has streams busy
// (llama3.1-405b-trn2u, 16 simulated ranks: 15 on average, 18 at most), where spreading and
// refilling buckets of one or two keys, or sifting them through a heap, cost more than moving a
// few keys along an array.
// Equal times always sit in the same tier, so the seq order among them is kept by near_'s heap.
// seq is 32 bits to keep a key at 16 bytes; when the counter reaches its limit the queue renumbers
// the keys it holds in their current order (O(n log n), once every ~4e9 pushes).
// Memory: buckets and overflow_ keep their capacity, so once their sizes have peaked pushes do not
// allocate (the hold benchmark counts the allocations that remain while capacities settle).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "trnsim/sim/key_heap.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::sim {

class EventQueue {
 public:
  static constexpr std::uint32_t kDefaultSeqLimit = std::numeric_limits<std::uint32_t>::max();

  // Contract: an empty queue; seq_limit (> 1) is where the sequence counter renumbers (tests use a
  // small one). Cost: two small allocations (the small queue's 2 x kSmall keys, the near heap).
  explicit EventQueue(std::uint32_t seq_limit = kDefaultSeqLimit);

  // Contract: from now on, on_refill(context, first, last) is called with the keys each time a
  // bucket moves into the near tier (about once per kKeysPerBucket pops), so that the owner can
  // prefetch what they refer to before they pop; never while the queue is small (its keys are few
  // and in cache). Cost: O(1).
  using RefillObserver = void (*)(void* context, const EventKey* first, const EventKey* last);
  void observe_refills(RefillObserver on_refill, void* context) {
    on_refill_ = on_refill;
    refill_context_ = context;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // Contract: adds (t, slot) after every key already held at time t. Throws InternalError when
  // seq_limit keys are already held. Cost: O(1) amortised; allocates only to grow capacity.
  void push(Time t, std::uint32_t slot);

  // Contract: the smallest key (earliest time, then first pushed). Precondition: !empty().
  // Cost: O(1) amortised (refilling the near tier is spread over the keys it brings).
  const EventKey& top() {
    if (small_mode_) return small_[small_head_];
    if (near_.empty()) refill();
    return near_.top();
  }

  // Contract: removes top(). Precondition: !empty(). Cost: O(log near) (usually deferred to the next
  // push or top, see KeyHeap::pop).
  void pop() {
    if (small_mode_) {
      if (++small_head_ == small_.size()) {
        small_.clear();
        small_head_ = 0;
      }
    } else {
      if (near_.empty()) refill();
      near_.pop();
    }
    --size_;
  }

  // Contract: removes every key whose slot satisfies is_dead(slot), calling on_removed(slot) for
  // each, and keeps the others in order. Cost: O(n) plus the calls; never allocates.
  template <class IsDead, class OnRemoved>
  void remove_if(IsDead is_dead, OnRemoved on_removed) {
    if (small_mode_) {
      std::size_t kept = small_head_;
      for (std::size_t i = small_head_; i < small_.size(); ++i) {
        if (is_dead(small_[i].slot())) {
          on_removed(small_[i].slot());
        } else {
          small_[kept++] = small_[i];
        }
      }
      size_ -= small_.size() - kept;
      small_.resize(kept);
      return;
    }
    size_ -= near_.remove_if(is_dead, on_removed);
    const auto sweep = [&](std::vector<EventKey>& keys) {
      std::size_t kept = 0;
      for (const EventKey& k : keys) {
        if (is_dead(k.slot())) {
          on_removed(k.slot());
        } else {
          keys[kept++] = k;
        }
      }
      size_ -= keys.size() - kept;
      keys.resize(kept);
    };
    for (std::size_t b = bucket_; b < bucket_count_; ++b) sweep(buckets_[b]);
    sweep(overflow_);
  }

 private:
  // Target keys per bucket where keys are densest. 8 to 16 measured best on the hold benchmark:
  // fewer makes more buckets (more cache lines touched by pushes), more makes near_ deeper.
  static constexpr std::size_t kKeysPerBucket = 16;
  // Share of overflow_ (in percent) that one spread moves into buckets, and the sample size used
  // to find where that share ends.
  static constexpr std::size_t kCoveredPercent = 75;
  static constexpr std::size_t kSample = 64;
  // The most keys a small queue (small_) holds.
  static constexpr std::size_t kSmall = 64;

  // Order-preserving map of a time onto unsigned integers, so bucket arithmetic cannot overflow.
  static std::uint64_t ordinal(Time::Rep t) {
    return static_cast<std::uint64_t>(t) ^ (std::uint64_t{1} << 63);
  }
  std::uint64_t bucket_end(std::size_t b) const;  // ordinal just past bucket b, saturating
  void refill();
  void spread_overflow();
  void insert_small(const EventKey& key);
  void spill_small();
  void renumber();

  // The small queue: keys [small_head_, end) of small_ in pop order, while small_mode_ (the
  // tiers below are empty then).
  std::vector<EventKey> small_;
  std::size_t small_head_ = 0;
  bool small_mode_ = true;
  KeyHeap near_;
  std::vector<std::vector<EventKey>> buckets_;  // [bucket_, bucket_count_) in use; never shrinks
  std::size_t bucket_count_ = 0;
  std::size_t bucket_ = 0;  // next bucket to move into near_; those before it are empty
  std::uint64_t base_ = 0;  // ordinal where bucket 0 starts
  unsigned shift_ = 0;      // bucket width is 2^shift_ ps
  // Ordinals: near_ < near_end_ <= buckets < far_end_ <= overflow_.
  std::uint64_t near_end_ = 0;
  std::uint64_t far_end_ = 0;
  std::vector<EventKey> overflow_;
  std::size_t size_ = 0;
  std::uint32_t next_seq_ = 0;
  std::uint32_t seq_limit_;
  RefillObserver on_refill_ = nullptr;
  void* refill_context_ = nullptr;
};

}  // namespace trnsim::sim
