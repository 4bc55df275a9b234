#pragma once
// Countdown: "wait for N completions, then act". A collective waits for its groups
// (replay::NetCommunicator), a coarse network call for its flows (net::FlowModel), a transfer for
// its data and reduction flows and a rank for its step's transfers (net::CollectiveRun), a task
// for its dependencies (replay executor). Each arms one with N and acts when count_down() reports
// the last completion.
//
// Contract:
//  - arm(n) starts a new wait for n completions (n = 0: nothing is awaited, done() at once).
//  - count_down() records one completion and returns true for the one that ends the wait.
//    A completion when none is awaited is a caller bug: InternalError, never a wrap-around.
//  - O(1), no allocation: a plain 32-bit counter, so vectors and slot pools of them stay small.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "trnsim/error.hpp"

namespace trnsim::sim {

class Countdown {
 public:
  Countdown() = default;
  explicit Countdown(std::size_t n) { arm(n); }

  // Contract: throws InternalError beyond 2^32 - 1 completions.
  void arm(std::size_t n) {
    if (n > std::numeric_limits<std::uint32_t>::max()) {
      throw InternalError("sim::Countdown: more than 2^32 - 1 completions to wait for");
    }
    left_ = static_cast<std::uint32_t>(n);
  }

  bool count_down() {
    if (left_ == 0) throw InternalError("sim::Countdown: a completion when none is awaited");
    return --left_ == 0;
  }

  std::uint32_t left() const { return left_; }
  bool done() const { return left_ == 0; }

 private:
  std::uint32_t left_ = 0;
};

}  // namespace trnsim::sim
