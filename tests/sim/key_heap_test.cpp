#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "trnsim/sim/key_heap.hpp"

using trnsim::sim::EventKey;
using trnsim::sim::KeyHeap;

namespace {
EventKey key(std::int64_t time, std::uint32_t seq, std::uint32_t slot) {
  return {time, (std::uint64_t{seq} << 32) | slot};
}
std::vector<std::uint32_t> drain(KeyHeap& h) {
  std::vector<std::uint32_t> slots;
  while (!h.empty()) {
    slots.push_back(h.top().slot());
    h.pop();
  }
  return slots;
}
}  // namespace

TEST_CASE("key heap: pops keys in (time, seq) order, including pops followed by pushes") {
  std::mt19937_64 rng(3);
  KeyHeap heap;
  std::vector<EventKey> reference;  // kept sorted descending; back() is the smallest
  std::uint32_t seq = 0;
  for (int i = 0; i < 20'000; ++i) {
    // Hold-like pattern: mostly pop-then-push (replace-top), sometimes a lone push or pop.
    const auto r = rng() % 4;
    if (!heap.empty() && r != 0) {
      REQUIRE(heap.size() == reference.size());
      REQUIRE(heap.top().slot() == reference.back().slot());
      heap.pop();
      reference.pop_back();
    }
    if (r != 3 || heap.empty()) {
      const EventKey k = key(static_cast<std::int64_t>(rng() % 64), seq, seq);
      ++seq;
      heap.push(k);
      reference.insert(std::upper_bound(reference.begin(), reference.end(), k,
                                        [](const EventKey& a, const EventKey& b) { return b < a; }),
                       k);
    }
  }
  std::vector<std::uint32_t> expected;
  for (auto it = reference.rbegin(); it != reference.rend(); ++it) expected.push_back(it->slot());
  CHECK(drain(heap) == expected);
}

TEST_CASE("key heap: assign heapifies arbitrary keys and remove_if keeps the rest in order") {
  // Times 9, 8, ..., 0 in slots 0..9; expected pop order by time: slots 9, 8, ..., 0.
  std::vector<EventKey> keys;
  for (std::uint32_t s = 0; s < 10; ++s) keys.push_back(key(9 - static_cast<std::int64_t>(s), s, s));
  KeyHeap heap;
  heap.push(key(-5, 99, 99));  // replaced by assign
  heap.assign(keys.data(), keys.data() + keys.size());
  REQUIRE(heap.size() == 10);
  heap.pop();  // slot 9 (time 0); its removal is pending when remove_if runs
  std::vector<std::uint32_t> removed;
  const std::size_t n = heap.remove_if([](std::uint32_t s) { return s % 3 == 0; },
                                       [&removed](std::uint32_t s) { removed.push_back(s); });
  CHECK(n == 3);  // slots 0, 3, 6
  std::sort(removed.begin(), removed.end());
  CHECK(removed == std::vector<std::uint32_t>{0, 3, 6});
  CHECK(drain(heap) == std::vector<std::uint32_t>{8, 7, 5, 4, 2, 1});
}
