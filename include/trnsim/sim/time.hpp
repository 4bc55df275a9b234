#pragma once
// Simulated time: a signed 64-bit count of picoseconds (range about +-106 days).
// Integer time keeps event order exact and runs reproducible; seconds (double) only at the edges.
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace trnsim::sim {

class Time {
 public:
  using Rep = std::int64_t;
  static constexpr Rep kPerSecond = 1'000'000'000'000;

  constexpr Time() = default;
  static constexpr Time ps(Rep v) { return Time(v); }
  static constexpr Time ns(Rep v) { return Time(checked_mul(v, 1'000)); }
  static constexpr Time us(Rep v) { return Time(checked_mul(v, 1'000'000)); }
  static constexpr Time max() { return Time(std::numeric_limits<Rep>::max()); }
  static constexpr Time zero() { return Time(0); }
  // Rounds to the nearest picosecond; throws std::overflow_error outside the range, or on NaN.
  static Time seconds(double s) {
    const double p = std::nearbyint(s * static_cast<double>(kPerSecond));
    if (!(p >= -9.2e18 && p <= 9.2e18)) throw std::overflow_error("sim::Time: seconds value out of range");
    return Time(static_cast<Rep>(p));
  }

  constexpr Rep picoseconds() const { return v_; }
  constexpr double to_seconds() const { return static_cast<double>(v_) / static_cast<double>(kPerSecond); }
  constexpr double to_us() const { return static_cast<double>(v_) * 1e-6; }

  constexpr auto operator<=>(const Time&) const = default;
  // Addition and subtraction throw std::overflow_error instead of wrapping.
  constexpr Time operator+(Time o) const { return Time(checked_add(v_, o.v_)); }
  constexpr Time operator-(Time o) const { return Time(checked_sub(v_, o.v_)); }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }

 private:
  constexpr explicit Time(Rep v) : v_(v) {}
  static constexpr Rep checked_add(Rep a, Rep b) {
    Rep r{};
    if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("sim::Time: addition overflow");
    return r;
  }
  static constexpr Rep checked_sub(Rep a, Rep b) {
    Rep r{};
    if (__builtin_sub_overflow(a, b, &r)) throw std::overflow_error("sim::Time: subtraction overflow");
    return r;
  }
  static constexpr Rep checked_mul(Rep a, Rep b) {
    Rep r{};
    if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("sim::Time: multiplication overflow");
    return r;
  }
  Rep v_ = 0;
};

}  // namespace trnsim::sim
