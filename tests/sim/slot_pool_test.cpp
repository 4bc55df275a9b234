#include <catch2/catch.hpp>

#include <vector>

#include "trnsim/sim/slot_pool.hpp"

using trnsim::sim::SlotPool;

namespace {
struct Payload {
  int value = 7;  // value-initialised records start at 7, so "constructed once" is observable
};
}  // namespace

TEST_CASE("slot pool: fresh slots come in ascending order, released ones last in first out") {
  SlotPool<Payload, 2> pool;  // chunks of 4 slots, so that growth happens within the test
  std::vector<std::uint32_t> got;
  for (int i = 0; i < 6; ++i) got.push_back(pool.acquire());
  // Ascending across the chunk boundary at 4.
  CHECK(got == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  CHECK(pool.capacity() == 8);  // two chunks of 4
  CHECK(pool.in_use() == 6);
  pool.release(1);
  pool.release(4);
  pool.release(2);
  CHECK(pool.in_use() == 3);
  // Last released first: 2, 4, 1; then the lowest never used: 6, 7; then a third chunk: 8.
  std::vector<std::uint32_t> again;
  for (int i = 0; i < 6; ++i) again.push_back(pool.acquire());
  CHECK(again == std::vector<std::uint32_t>{2, 4, 1, 6, 7, 8});
  CHECK(pool.capacity() == 12);
  CHECK(pool.in_use() == 9);
}

TEST_CASE("slot pool: records never move and keep their state across release and reuse") {
  SlotPool<Payload, 1> pool;  // chunks of 2: every second acquire grows the pool
  const auto a = pool.acquire();
  CHECK(pool[a].value == 7);
  pool[a].value = 42;
  const Payload* where = &pool[a];
  for (int i = 0; i < 100; ++i) (void)pool.acquire();  // 50 more chunks
  CHECK(&pool[a] == where);
  CHECK(pool[a].value == 42);
  pool.release(a);
  const auto b = pool.acquire();  // the slot just released
  CHECK(b == a);
  CHECK(pool[b].value == 42);  // reused as it was left: the owner resets what it needs
}

TEST_CASE("slot pool: holds() covers exactly the allocated slots") {
  SlotPool<Payload, 3> pool;
  CHECK_FALSE(pool.holds(0));
  CHECK(pool.capacity() == 0);
  (void)pool.acquire();
  CHECK(pool.holds(0));
  CHECK(pool.holds(7));  // the rest of the first chunk of 8
  CHECK_FALSE(pool.holds(8));
}
