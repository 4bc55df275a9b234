#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "trnsim/sim/time.hpp"

using trnsim::sim::Time;

TEST_CASE("time: unit constructors count picoseconds") {
  CHECK(Time::ns(3).picoseconds() == 3'000);
  CHECK(Time::us(2).picoseconds() == 2'000'000);
  CHECK(Time::us(-7).picoseconds() == -7'000'000);
  CHECK(Time::us(2).to_us() == 2.0);
  CHECK(Time::ns(1500).to_us() == 1.5);
  CHECK(Time::zero().picoseconds() == 0);
  CHECK(Time{} == Time::zero());
}

TEST_CASE("time: seconds round trip and rounding to the nearest picosecond") {
  CHECK(Time::seconds(1.5).picoseconds() == 1'500'000'000'000);
  CHECK(Time::seconds(2.5).to_seconds() == 2.5);
  CHECK(Time::seconds(-0.25).to_seconds() == -0.25);
  CHECK(Time::seconds(1e-12) == Time::ps(1));
  CHECK(Time::seconds(0.4e-12) == Time::ps(0));
  CHECK(Time::seconds(0.6e-12) == Time::ps(1));
  // 123.456789 us = 123,456,789 ps exactly; the double round trip agrees to its precision.
  CHECK(Time::seconds(123.456789e-6).picoseconds() == 123'456'789);
  CHECK(Time::ps(123'456'789).to_seconds() == Approx(123.456789e-6).epsilon(1e-15));
  // 9e6 s = 9e18 ps is inside the int64 range (9.22e18).
  CHECK(Time::seconds(9e6).picoseconds() == 9'000'000'000'000'000'000);
}

TEST_CASE("time: arithmetic and comparison") {
  CHECK(Time::ns(5) - Time::ns(7) == Time::ps(-2'000));
  CHECK(Time::us(1) + Time::ns(1) == Time::ps(1'001'000));
  Time t = Time::ns(10);
  t += Time::ns(5);
  CHECK(t == Time::ns(15));
  t -= Time::us(1);
  CHECK(t == Time::ps(-985'000));
  CHECK(Time::ps(1) < Time::ps(2));
  CHECK(Time::ns(1) > Time::ps(999));
  CHECK(Time::max() > Time::seconds(9e6));
}

TEST_CASE("time: overflow throws instead of wrapping") {
  constexpr Time::Rep kMax = std::numeric_limits<Time::Rep>::max();
  constexpr Time::Rep kMin = std::numeric_limits<Time::Rep>::min();
  CHECK_THROWS_AS(Time::max() + Time::ps(1), std::overflow_error);
  CHECK_THROWS_AS(Time::ps(kMin) - Time::ps(1), std::overflow_error);
  CHECK_THROWS_AS(Time::ps(kMin) + Time::ps(-1), std::overflow_error);
  CHECK_THROWS_AS(Time::ns(kMax / 1'000 + 1), std::overflow_error);
  CHECK_THROWS_AS(Time::us(kMax / 1'000'000 + 1), std::overflow_error);
  CHECK_THROWS_AS(Time::us(kMin / 1'000'000 - 1), std::overflow_error);
  CHECK_NOTHROW(Time::ns(kMax / 1'000));
  // 1e7 s = 1e19 ps, beyond int64.
  CHECK_THROWS_AS(Time::seconds(1e7), std::overflow_error);
  CHECK_THROWS_AS(Time::seconds(-1e7), std::overflow_error);
  CHECK_THROWS_AS(Time::seconds(std::nan("")), std::overflow_error);
  CHECK_THROWS_AS(Time::seconds(std::numeric_limits<double>::infinity()), std::overflow_error);
  Time t = Time::max();
  CHECK_THROWS_AS(t += Time::ps(1), std::overflow_error);
  CHECK(t == Time::max());  // a failed += leaves the value unchanged
}
