#include "trnsim/net/flat_index.hpp"

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/huge_pages.hpp"

namespace trnsim::net {

void FlatIndex::insert(std::uint64_t key, std::uint32_t value) {
  if (key == kEmpty) throw InternalError("FlatIndex: the empty-slot key cannot be stored");
  if (2 * (size_ + 1) > keys_.size()) grow();
  std::size_t i = slot(key);
  for (; keys_[i] != kEmpty; i = (i + 1) & mask_) {
    if (keys_[i] == key) throw InternalError(fmt::format("FlatIndex: key {:#x} stored twice", key));
  }
  keys_[i] = key;
  values_[i] = value;
  ++size_;
}

void FlatIndex::grow() { rehash(keys_.empty() ? 64 : 2 * keys_.size()); }

void FlatIndex::reserve(std::size_t n) {
  std::size_t capacity = 64;
  while (capacity < 2 * n) capacity *= 2;
  if (capacity > keys_.size()) rehash(capacity);
}

void FlatIndex::rehash(std::size_t capacity) {
  std::vector<std::uint64_t> keys = std::move(keys_);
  std::vector<std::uint32_t> values = std::move(values_);
  reserve_huge(keys_, capacity);  // a table of millions of routes: on huge pages (huge_pages.hpp)
  reserve_huge(values_, capacity);
  keys_.assign(capacity, kEmpty);
  values_.assign(capacity, 0);
  mask_ = capacity - 1;
  for (std::size_t j = 0; j < keys.size(); ++j) {
    if (keys[j] == kEmpty) continue;
    std::size_t i = slot(keys[j]);
    while (keys_[i] != kEmpty) i = (i + 1) & mask_;
    keys_[i] = keys[j];
    values_[i] = values[j];
  }
}

}  // namespace trnsim::net
