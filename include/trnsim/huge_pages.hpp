#pragma once
// Large arrays backed by transparent huge pages. Where Linux gives huge pages only on request
// (THP "madvise", as on the machine of the README's figures), every first touch of a 4 KiB page
// of a fresh array is a page fault of its own; in a virtual machine each costs microseconds, and
// at 65,536 chips page faults were about a third of a run, most in the per-link and per-route
// arrays. advise_huge_pages asks for 2 MiB pages over the whole 2 MiB pages inside an array not
// touched yet (madvise MADV_HUGEPAGE): a hint, which changes no value and is nothing elsewhere or
// when refused. Arrays under 4 MiB are left alone (at most one huge page would fit). Kept at the
// top of include/trnsim, like error.hpp, for any layer that holds such arrays (today: net).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace trnsim {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

inline void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < 2 * kHugePageBytes) return;
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t end = (at + bytes) & ~(kHugePageBytes - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  static_cast<void>(data);
  static_cast<void>(bytes);
#endif
}

// Contract: v.reserve(n), the new storage advised as above before v's elements move into it.
template <class T, class A>
void reserve_huge(std::vector<T, A>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  std::vector<T, A> fresh(v.get_allocator());
  fresh.reserve(n);
  advise_huge_pages(fresh.data(), fresh.capacity() * sizeof(T));
  fresh.insert(fresh.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  v.swap(fresh);
}

// Contract: room for `extra` more elements, growing as push_back does (doubling) into advised
// storage. Call before appending to a vector that grows to millions of elements.
template <class T, class A>
void grow_huge(std::vector<T, A>& v, std::size_t extra = 1) {
  if (v.size() + extra <= v.capacity()) return;
  reserve_huge(v, std::max(v.size() + extra, 2 * v.capacity()));
}

}  // namespace trnsim
