#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>

#include "trnsim/sim/engine.hpp"

using trnsim::sim::Engine;
using trnsim::sim::Time;

namespace {
// Hold model: an event that reschedules itself `hops` more times, `step` apart.
struct Hold {
  Engine* engine;
  int hops_left;
  Time step;
  std::size_t* max_pending;
  void operator()() const {
    *max_pending = std::max(*max_pending, engine->pending() + 1);  // +1: the one running
    if (hops_left > 0) engine->schedule_in(step, Hold{engine, hops_left - 1, step, max_pending});
  }
};
}  // namespace

TEST_CASE("engine: hold model runs the hand-counted number of events and ends at the hand-computed time") {
  Engine engine;
  // N = 100 events start at 0, 1, ..., 99 ns; each reschedules itself K = 50 times, d = 1 us later.
  // Events: N * (K + 1) = 100 * 51 = 5,100.
  // Last event: the one started at 99 ns, after 50 hops: 99 ns + 50 * 1 us = 50,099 ns.
  // At most N are pending at once (each run replaces itself by one).
  const int n = 100, k = 50;
  std::size_t max_pending = 0;
  for (int i = 0; i < n; ++i) engine.schedule(Time::ns(i), Hold{&engine, k, Time::us(1), &max_pending});
  engine.run();
  CHECK(engine.events_processed() == 5'100);
  CHECK(engine.now() == Time::ns(50'099));
  CHECK(max_pending == 100);
  CHECK(engine.pending() == 0);
}
