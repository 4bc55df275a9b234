#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "trnsim/error.hpp"
#include "trnsim/sim/event_queue.hpp"

using trnsim::sim::EventQueue;
using trnsim::sim::Time;

namespace {
// Reference pending set: a plain list; the next to pop is the smallest (time, insertion count).
struct Reference {
  struct Item {
    Time::Rep time;
    std::uint64_t inserted;
    std::uint32_t slot;
  };
  std::vector<Item> items;
  std::uint64_t count = 0;
  void push(Time::Rep t, std::uint32_t slot) { items.push_back({t, count++, slot}); }
  std::uint32_t pop() {
    auto it = std::min_element(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return a.time < b.time || (a.time == b.time && a.inserted < b.inserted);
    });
    const std::uint32_t slot = it->slot;
    items.erase(it);
    return slot;
  }
};

// Random pushes and pops, never more than max_size keys held, times drawn by next_time(rng, now)
// where now is the time of the last pop; checks every pop against Reference.
template <class NextTime>
void check_against_reference(EventQueue& q, int operations, std::size_t max_size, std::uint64_t seed,
                             NextTime next_time) {
  std::mt19937_64 rng(seed);
  Time::Rep now = std::numeric_limits<Time::Rep>::min();
  Reference ref;
  std::uint32_t next_slot = 0;
  for (int i = 0; i < operations; ++i) {
    if (q.empty() || (q.size() < max_size && rng() % 3 != 0)) {
      const Time::Rep t = next_time(rng, now);
      q.push(Time::ps(t), next_slot);
      ref.push(t, next_slot);
      ++next_slot;
    } else {
      now = q.top().time;
      REQUIRE(q.top().slot() == ref.pop());
      q.pop();
    }
    REQUIRE(q.size() == ref.items.size());
  }
  while (!q.empty()) {
    REQUIRE(q.top().slot() == ref.pop());
    q.pop();
  }
}
// Few distinct times: many ties.
Time::Rep few_times(std::mt19937_64& rng, Time::Rep) { return static_cast<Time::Rep>(rng() % 8); }
}  // namespace

TEST_CASE("event queue: pops by time, then first pushed first on ties") {
  EventQueue q;
  // (time, slot) pushed in this order; expected pop order worked out by hand:
  // t=1: slot 3; t=3: slots 1, 4; t=5: slots 0, 2, 5.
  const Time::Rep times[] = {5, 3, 5, 1, 3, 5};
  for (std::uint32_t s = 0; s < 6; ++s) q.push(Time::ps(times[s]), s);
  std::vector<std::uint32_t> order;
  while (!q.empty()) {
    order.push_back(q.top().slot());
    q.pop();
  }
  CHECK(order == std::vector<std::uint32_t>{3, 1, 4, 0, 2, 5});
}

TEST_CASE("event queue: random pushes and pops match a reference list") {
  SECTION("few distinct times, many ties") {
    EventQueue q;
    check_against_reference(q, 20'000, 20'000, 42, few_times);
  }
  SECTION("hold pattern: now plus a random increment, with ties at now") {
    EventQueue q;
    check_against_reference(q, 50'000, 2'000, 5, [](std::mt19937_64& rng, Time::Rep now) {
      const Time::Rep from = std::max<Time::Rep>(now, 0);
      return rng() % 5 == 0 ? from : from + static_cast<Time::Rep>(rng() % 100'000);
    });
  }
  SECTION("times over the whole int64 range, extremes included") {
    EventQueue q;
    check_against_reference(q, 20'000, 20'000, 9, [](std::mt19937_64& rng, Time::Rep) {
      switch (rng() % 4) {
        case 0: return std::numeric_limits<Time::Rep>::max();
        case 1: return std::numeric_limits<Time::Rep>::min();
        default: return static_cast<Time::Rep>(rng());
      }
    });
  }
}

TEST_CASE("event queue: renumbering the sequence counter keeps the order") {
  SECTION("a small queue: a limit of 5, renumbered every few pushes") {
    EventQueue q(5);
    check_against_reference(q, 5'000, 5, 7, few_times);
  }
  SECTION("in the tiers: up to 300 keys (past a small queue's 64), a limit of 1,000") {
    EventQueue q(1'000);
    check_against_reference(q, 20'000, 300, 8, few_times);
  }
}

TEST_CASE("event queue: refuses more keys than the sequence limit") {
  EventQueue q(4);
  for (std::uint32_t s = 0; s < 4; ++s) q.push(Time::ps(1), s);
  CHECK_THROWS_AS(q.push(Time::ps(1), 4), trnsim::InternalError);
  q.pop();
  CHECK_NOTHROW(q.push(Time::ps(0), 5));
  CHECK(q.top().slot() == 5);
}

TEST_CASE("event queue: remove_if drops the chosen keys and keeps the rest in order") {
  // Slots 0..n-1 at time (slot % 10): odd slots are removed. 100 keys are held by the tiers, 20
  // by a small queue (at most 64).
  const std::uint32_t n = GENERATE(100u, 20u);
  EventQueue q;
  for (std::uint32_t s = 0; s < n; ++s) q.push(Time::ps(s % 10), s);
  std::vector<std::uint32_t> removed;
  q.remove_if([](std::uint32_t s) { return s % 2 == 1; },
              [&removed](std::uint32_t s) { removed.push_back(s); });
  CHECK(q.size() == n / 2);
  CHECK(removed.size() == n / 2);
  CHECK(std::all_of(removed.begin(), removed.end(), [](std::uint32_t s) { return s % 2 == 1; }));
  // One more key, slot 1000 at 5 ps, pushed after the removal, must find only the kept ones.
  q.push(Time::ps(5), 1000);
  // Expected: by time t = 0, 2, 4, 6, 8 the even slots t, t+10, ... below n in push order, and
  // slot 1000 between times 4 and 6.
  std::vector<std::uint32_t> expected;
  for (std::uint32_t t = 0; t < 10; t += 2) {
    if (t == 6) expected.push_back(1000);
    for (std::uint32_t s = t; s < n; s += 10) expected.push_back(s);
  }
  std::vector<std::uint32_t> order;
  while (!q.empty()) {
    order.push_back(q.top().slot());
    q.pop();
  }
  CHECK(order == expected);
}

TEST_CASE("event queue: refill observer sees every key before it pops") {
  EventQueue q;
  std::vector<std::uint32_t> observed;
  q.observe_refills(
      [](void* context, const trnsim::sim::EventKey* first, const trnsim::sim::EventKey* last) {
        auto& seen = *static_cast<std::vector<std::uint32_t>*>(context);
        for (auto* k = first; k != last; ++k) seen.push_back(k->slot());
      },
      &observed);
  // 1000 keys pushed before any pop all go through the bucket tier, so each is observed once.
  for (std::uint32_t s = 0; s < 1000; ++s) q.push(Time::ps(static_cast<Time::Rep>((s * 7919) % 1000)), s);
  while (!q.empty()) {
    const std::uint32_t slot = q.top().slot();
    CHECK(std::find(observed.begin(), observed.end(), slot) != observed.end());
    q.pop();
  }
  std::sort(observed.begin(), observed.end());
  CHECK(observed.size() == 1000);
  CHECK(std::adjacent_find(observed.begin(), observed.end()) == observed.end());
}

TEST_CASE("event queue: a key pushed at the near tier's boundary stays behind older keys at that time") {
  // 10 keys at each time 0..99 ps, one pop (which moves the first bucket into the near tier), then
  // one more key at each time 0..99: every time after the first bucket's end is then held both in
  // a bucket (older keys) and pushed anew at the boundary; the reference says who goes first.
  EventQueue q;
  Reference ref;
  std::uint32_t slot = 0;
  const auto push = [&](Time::Rep t) {
    q.push(Time::ps(t), slot);
    ref.push(t, slot);
    ++slot;
  };
  for (int round = 0; round < 10; ++round)
    for (Time::Rep t = 0; t < 100; ++t) push(t);
  REQUIRE(q.top().slot() == ref.pop());
  q.pop();
  for (Time::Rep t = 1; t < 100; ++t) push(t);
  while (!q.empty()) {
    REQUIRE(q.top().slot() == ref.pop());
    q.pop();
  }
}

TEST_CASE("event queue: keys at the very end of time drain in FIFO order") {
  // `filler` keys at 1 ps (slots 100...) pushed first: none keeps the queue small, 70 put it in
  // the tiers (past a small queue's 64 keys), where the end of time saturates the buckets' end.
  const std::uint32_t filler = GENERATE(0u, 70u);
  EventQueue q;
  for (std::uint32_t s = 0; s < filler; ++s) q.push(Time::ps(1), 100 + s);
  const Time end = Time::max();
  for (std::uint32_t s = 0; s < 5; ++s) q.push(end, s);
  q.push(Time::ps(0), 5);
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < 3 + filler; ++i) {
    order.push_back(q.top().slot());
    q.pop();
  }
  for (std::uint32_t s = 6; s < 8; ++s) q.push(end, s);  // behind the older keys at the same time
  while (!q.empty()) {
    order.push_back(q.top().slot());
    q.pop();
  }
  // Slot 5 (0 ps), the fillers in push order (1 ps), then the end of time in push order.
  std::vector<std::uint32_t> expected{5};
  for (std::uint32_t s = 0; s < filler; ++s) expected.push_back(100 + s);
  expected.insert(expected.end(), {0, 1, 2, 3, 4, 6, 7});
  CHECK(order == expected);
}

TEST_CASE("event queue: a queue that grows past a small one and shrinks back keeps the order") {
  // Sizes go up and down between 0 and 150 keys, across the 64 keys a small queue (one sorted
  // array) holds at most, and down to empty, where the queue starts small again; times are the
  // hold pattern's (now plus a random increment, a fifth of them at now). Every pop is checked
  // against the reference list, so a key lost or misordered at a spill or a return fails.
  EventQueue q;
  Reference ref;
  std::mt19937_64 rng(11);
  Time::Rep now = 0;
  std::uint32_t slot = 0;
  const auto pop = [&] {
    now = q.top().time;
    REQUIRE(q.top().slot() == ref.pop());
    q.pop();
  };
  for (int round = 0; round < 40; ++round) {
    const std::size_t high = 40 + static_cast<std::size_t>(rng() % 110);
    const std::size_t low = rng() % 3 == 0 ? 0 : 5 + static_cast<std::size_t>(rng() % 30);
    while (q.size() < high) {
      const Time::Rep t = rng() % 5 == 0 ? now : now + static_cast<Time::Rep>(rng() % 100'000);
      q.push(Time::ps(t), slot);
      ref.push(t, slot++);
      if (rng() % 4 == 0) pop();
    }
    while (q.size() > low) pop();
  }
  while (!q.empty()) pop();
  CHECK(slot > 2'000);
}
