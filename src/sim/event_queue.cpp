#include "trnsim/sim/event_queue.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "trnsim/error.hpp"

namespace trnsim::sim {

EventQueue::EventQueue(std::uint32_t seq_limit) : seq_limit_(seq_limit) {
  if (seq_limit < 2) throw InternalError("sim::EventQueue: seq_limit must be at least 2");
  small_.reserve(2 * kSmall);
}

void EventQueue::push(Time t, std::uint32_t slot) {
  if (next_seq_ == seq_limit_) renumber();
  const EventKey key{t.picoseconds(), (std::uint64_t{next_seq_} << 32) | slot};
  if (size_ == 0) small_mode_ = true;  // an empty queue starts small again
  if (small_mode_) {
    if (small_.size() - small_head_ < kSmall) {
      insert_small(key);
      ++next_seq_;
      ++size_;
      return;
    }
    spill_small();
  }
  const std::uint64_t at = ordinal(key.time);
  if (at < near_end_) {
    near_.push(key);
  } else if (at < far_end_) {
    buckets_[(at - base_) >> shift_].push_back(key);
  } else {
    overflow_.push_back(key);
  }
  ++next_seq_;
  ++size_;
}

std::uint64_t EventQueue::bucket_end(std::size_t b) const {
  const std::uint64_t start = base_ + (std::uint64_t{b} << shift_);  // <= the spread: no overflow
  const std::uint64_t width = std::uint64_t{1} << shift_;
  return start > std::numeric_limits<std::uint64_t>::max() - width
             ? std::numeric_limits<std::uint64_t>::max()
             : start + width;
}

// Precondition: near_ is empty and size_ > 0. Moves the next non-empty bucket into near_.
void EventQueue::refill() {
  for (;;) {
    while (bucket_ < bucket_count_ && buckets_[bucket_].empty()) ++bucket_;
    if (bucket_ < bucket_count_) {
      std::vector<EventKey>& keys = buckets_[bucket_];
      if (on_refill_ != nullptr) on_refill_(refill_context_, keys.data(), keys.data() + keys.size());
      near_.assign(keys.data(), keys.data() + keys.size());
      keys.clear();
      near_end_ = bucket_end(bucket_);
      ++bucket_;
      return;
    }
    spread_overflow();
  }
}

// Precondition: every bucket is empty and overflow_ is not. Spreads the earliest part of overflow_
// over fresh buckets of a power-of-two width; the rest stays in overflow_. The width comes from the
// density of the earliest keys, estimated on an evenly strided sample: the buckets then hold about
// kKeysPerBucket keys each where keys are dense (near now) whatever the tail does, and their number
// stays below n / kKeysPerBucket. A call moves out about kCoveredFraction of overflow_ (at least one
// key), so its O(n) pass costs O(1) per key.
void EventQueue::spread_overflow() {
  const std::size_t n = overflow_.size();
  std::array<std::uint64_t, kSample> sample{};
  const std::size_t taken = std::min(n, kSample);
  for (std::size_t i = 0; i < taken; ++i) sample[i] = ordinal(overflow_[i * n / taken].time);
  std::uint64_t lo = sample[0];
  for (const EventKey& k : overflow_) lo = std::min(lo, ordinal(k.time));
  // The sample's quantile kCoveredFraction estimates the time below which that fraction lies.
  const std::size_t q = (taken - 1) * kCoveredPercent / 100;
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(q),
                   sample.begin() + static_cast<std::ptrdiff_t>(taken));
  const std::uint64_t span = sample[q] - lo;
  const std::uint64_t target = std::max<std::uint64_t>(1, n * kCoveredPercent / 100 / kKeysPerBucket);
  unsigned shift = 0;
  while (shift < 63 && (span >> shift) >= target) ++shift;
  const auto count = static_cast<std::size_t>((span >> shift) + 1);
  if (buckets_.size() < count) buckets_.resize(count);
  bucket_count_ = count;
  bucket_ = 0;
  base_ = lo;
  shift_ = shift;
  near_end_ = lo;
  far_end_ = bucket_end(count - 1);
  std::size_t kept = 0;
  for (const EventKey& k : overflow_) {
    // By index, not `at < far_end_`: far_end_ saturates at the top of the range, and a key there
    // must still move (else a queue of Time::max() keys would never drain).
    const std::uint64_t b = (ordinal(k.time) - base_) >> shift_;
    if (b < count) {
      buckets_[b].push_back(k);
    } else {
      overflow_[kept++] = k;
    }
  }
  overflow_.resize(kept);
}

// Precondition: small_mode_ and fewer than kSmall keys held. Inserts `key` at its place, moving
// the keys on the shorter side of it: those before it one slot towards the front (into the room
// pops left) when it falls in the first half, else those after it one slot back (a replay's new
// event lands nearer the front: llama3.1-405b-trn2u's lie 5.3 keys from the head on average, 9.3
// from the end). Compacts the array first when it has reached its capacity, so that it never
// grows past 2 kSmall.
void EventQueue::insert_small(const EventKey& key) {
  const std::size_t held = small_.size() - small_head_;
  if (small_head_ > 0 && held > 0 && key < small_[small_head_ + held / 2]) {
    std::size_t i = --small_head_;
    for (; small_[i + 1] < key; ++i) small_[i] = small_[i + 1];
    small_[i] = key;
    return;
  }
  if (small_.size() == small_.capacity() && small_head_ > 0) {
    small_.erase(small_.begin(), small_.begin() + static_cast<std::ptrdiff_t>(small_head_));
    small_head_ = 0;
  }
  std::size_t i = small_.size();
  small_.push_back(key);
  for (; i > small_head_ && key < small_[i - 1]; --i) small_[i] = small_[i - 1];
  small_[i] = key;
}

// Precondition: small_mode_. Moves the small queue's keys to overflow_ (the tiers are empty then),
// whence the next refill spreads them over buckets as for any large queue.
void EventQueue::spill_small() {
  overflow_.insert(overflow_.end(), small_.begin() + static_cast<std::ptrdiff_t>(small_head_), small_.end());
  small_.clear();
  small_head_ = 0;
  small_mode_ = false;
  near_end_ = far_end_ = 0;
  bucket_ = bucket_count_ = 0;
}

// Gives the held keys the sequence numbers 0..n-1 in pop order. The relabelling keeps every
// relative order, so near_'s heap stays valid and the buckets need no move.
void EventQueue::renumber() {
  near_.settle();
  std::vector<EventKey*> all;
  all.reserve(size_);
  for (std::size_t i = small_head_; i < small_.size(); ++i) all.push_back(&small_[i]);
  for (std::size_t i = 0; i < near_.size(); ++i) all.push_back(near_.keys() + i);
  for (std::size_t b = bucket_; b < bucket_count_; ++b) {
    for (EventKey& k : buckets_[b]) all.push_back(&k);
  }
  for (EventKey& k : overflow_) all.push_back(&k);
  if (all.size() >= seq_limit_) {
    throw InternalError(
        fmt::format("sim::EventQueue: cannot hold more than {} pending events", seq_limit_));
  }
  std::sort(all.begin(), all.end(), [](const EventKey* a, const EventKey* b) { return *a < *b; });
  std::uint32_t seq = 0;
  for (EventKey* k : all) k->order = (std::uint64_t{seq++} << 32) | k->slot();
  next_seq_ = seq;
}

}  // namespace trnsim::sim
