#include <catch2/catch.hpp>

#include "trnsim/error.hpp"
#include "trnsim/sim/countdown.hpp"

using trnsim::sim::Countdown;

TEST_CASE("countdown: armed with 3, only the third completion ends the wait") {
  Countdown c(3);
  CHECK(c.left() == 3);
  CHECK_FALSE(c.done());
  CHECK_FALSE(c.count_down());  // 3 -> 2
  CHECK_FALSE(c.count_down());  // 2 -> 1
  CHECK(c.left() == 1);
  CHECK(c.count_down());        // 1 -> 0: the last
  CHECK(c.done());
  CHECK(c.left() == 0);
}

TEST_CASE("countdown: a completion beyond the awaited ones is an internal error, not a wrap-around") {
  Countdown idle;  // default: nothing awaited
  CHECK(idle.done());
  CHECK_THROWS_AS(idle.count_down(), trnsim::InternalError);
  CHECK(idle.left() == 0);  // unchanged by the rejected call

  Countdown one(1);
  CHECK(one.count_down());
  CHECK_THROWS_AS(one.count_down(), trnsim::InternalError);
}

TEST_CASE("countdown: re-arming starts a new wait, arm(0) awaits nothing") {
  Countdown c(2);
  CHECK_FALSE(c.count_down());
  c.arm(4);  // the old wait's remaining completion is forgotten
  CHECK(c.left() == 4);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(c.count_down());
  CHECK(c.count_down());
  c.arm(0);
  CHECK(c.done());
  CHECK_THROWS_AS(c.count_down(), trnsim::InternalError);
}

TEST_CASE("countdown: counts above 2^32 - 1 are rejected") {
  Countdown c;
  const std::size_t max32 = 4294967295u;  // 2^32 - 1
  c.arm(max32);
  CHECK(c.left() == 4294967295u);
  if constexpr (sizeof(std::size_t) > 4) {
    CHECK_THROWS_AS(c.arm(max32 + 1), trnsim::InternalError);
  }
}
