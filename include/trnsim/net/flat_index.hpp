#pragma once
// FlatIndex: a map from 64-bit keys to 32-bit indices in one flat array (open addressing, linear
// probing, at most half full). The router and the topology look up a pair of ids per transfer and
// per link; a node-based std::unordered_map costs a pointer chase per lookup and an allocation per
// entry, which at hundreds of thousands of routes (65,536 chips) dominated the replay. Lookup
// order never shows in any output: it only finds an index.
#include <cstdint>
#include <vector>

namespace trnsim::net {

// A FlatIndex key of a pair of ids: a in the high 32 bits, b (as 32 bits) in the low ones.
inline std::uint64_t pair_key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

class FlatIndex {
 public:
  // The one key that cannot be stored: it marks an empty slot (the callers' keys are pairs of
  // non-negative 32-bit ids, whose top bit is clear).
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

  // Contract: the index stored for `key`, or nullptr. O(1) expected.
  const std::uint32_t* find(std::uint64_t key) const {
    if (keys_.empty()) return nullptr;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }
  // Contract: stores `value` for `key`, which must not be stored yet nor be kEmpty (InternalError).
  // Amortised O(1); doubles the table when it would pass half full.
  void insert(std::uint64_t key, std::uint32_t value);
  // Contract: room for `n` keys in all without growing (a builder that knows its count rehashes
  // once instead of at every doubling). O(n + size).
  void reserve(std::size_t n);
  std::size_t size() const { return size_; }

 private:
  std::size_t slot(std::uint64_t key) const {
    // splitmix64's finaliser: spreads pair keys whose low bits repeat.
    key = (key ^ (key >> 30)) * 0xBF58476D1CE4E5B9ull;
    key = (key ^ (key >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::size_t>(key ^ (key >> 31)) & mask_;
  }
  void grow();
  void rehash(std::size_t capacity);  // a power of two, more than twice size_

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> values_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace trnsim::net
