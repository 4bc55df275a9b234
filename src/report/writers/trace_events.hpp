#pragma once
// The Chrome trace writer's output side: a buffered stream of JSON events, times in microseconds
// written exactly from integer picoseconds, numbers in shortest round-trip form. Internal to
// src/report (chrome_trace.cpp, trace_counters.cpp).
#include <cmath>
#include <cstdint>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trnsim/sim/time.hpp"

namespace trnsim::report::trace {

// Events are separated by ",\n" and flushed to the stream every kFlushBytes, so memory stays flat
// however many events a trace has.
class EventStream {
 public:
  explicit EventStream(std::ostream& out) : out_(out) {}
  ~EventStream() = default;
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // Starts the next event; returns the buffer to append its JSON object to.
  fmt::memory_buffer& next() {
    if (buf_.size() >= kFlushBytes) flush();
    if (events_++ > 0) append(",\n");
    return buf_;
  }
  void append(std::string_view s) { buf_.append(s.data(), s.data() + s.size()); }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::uint64_t events() const { return events_; }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  std::ostream& out_;
  fmt::memory_buffer buf_;
  std::uint64_t events_ = 0;
};

// Microseconds, exact: integer picoseconds as "<us>.<fraction>" with trailing zeros dropped.
inline void append_us(fmt::memory_buffer& b, sim::Time t) {
  const std::int64_t ps = t.picoseconds();
  const std::int64_t us = ps / 1'000'000, frac = ps % 1'000'000;
  if (ps < 0) {  // not produced by the executor; kept exact all the same
    fmt::format_to(std::back_inserter(b), "{}", static_cast<double>(ps) * 1e-6);
    return;
  }
  fmt::format_to(std::back_inserter(b), "{}", us);
  if (frac == 0) return;
  char digits[6];
  std::int64_t f = frac;
  for (int i = 5; i >= 0; --i, f /= 10) digits[i] = static_cast<char>('0' + f % 10);
  std::size_t len = 6;
  while (digits[len - 1] == '0') --len;
  b.push_back('.');
  b.append(digits, digits + len);
}

// A finite double in shortest round-trip form; JSON has no inf/nan, so those become null.
inline void append_number(fmt::memory_buffer& b, double v) {
  if (!std::isfinite(v)) {
    b.append(std::string_view("null"));
    return;
  }
  fmt::format_to(std::back_inserter(b), "{}", v);
}

// A JSON string literal, quotes and escapes included.
inline std::string json_string(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

}  // namespace trnsim::report::trace
