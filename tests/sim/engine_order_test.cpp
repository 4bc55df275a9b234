#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "trnsim/error.hpp"
#include "trnsim/sim/engine.hpp"

using trnsim::sim::Engine;
using trnsim::sim::Time;

TEST_CASE("engine: events run in time order, and in scheduling order at equal times") {
  Engine engine;
  std::vector<int> order;
  std::vector<Time> seen;
  // Labels 0..5 at these times; by hand: t=1: 3; t=3: 1, 4; t=5: 0, 2, 5.
  const Time::Rep times[] = {5, 3, 5, 1, 3, 5};
  for (int label = 0; label < 6; ++label) {
    engine.schedule(Time::ns(times[label]), [&, label] {
      order.push_back(label);
      seen.push_back(engine.now());
    });
  }
  CHECK(engine.pending() == 6);
  engine.run();
  CHECK(order == std::vector<int>{3, 1, 4, 0, 2, 5});
  CHECK(seen == std::vector<Time>{Time::ns(1), Time::ns(3), Time::ns(3), Time::ns(5), Time::ns(5),
                                  Time::ns(5)});
  CHECK(engine.now() == Time::ns(5));
  CHECK(engine.events_processed() == 6);
  CHECK(engine.pending() == 0);
}

TEST_CASE("engine: many events with ties come out as a stable sort by time") {
  Engine engine;
  std::mt19937_64 rng(1);
  const int n = 10'000;
  std::vector<Time::Rep> times(n);
  for (auto& t : times) t = static_cast<Time::Rep>(rng() % 50);
  std::vector<int> ran;
  for (int i = 0; i < n; ++i) {
    engine.schedule(Time::ps(times[static_cast<std::size_t>(i)]), [&ran, i] { ran.push_back(i); });
  }
  engine.run();
  std::vector<int> expected(n);
  std::iota(expected.begin(), expected.end(), 0);
  std::stable_sort(expected.begin(), expected.end(), [&times](int a, int b) {
    return times[static_cast<std::size_t>(a)] < times[static_cast<std::size_t>(b)];
  });
  CHECK(ran == expected);
}

TEST_CASE("engine: schedule_in from a handler is relative to that handler's time") {
  Engine engine;
  Time fired = Time::max();
  engine.schedule(Time::ns(10), [&] {
    engine.schedule_in(Time::ns(5), [&] { fired = engine.now(); });
  });
  engine.schedule_in(Time::ns(1), [] {});  // relative to now() == 0 before running
  engine.run();
  CHECK(fired == Time::ns(15));
  CHECK(engine.events_processed() == 3);
}

TEST_CASE("engine: an event scheduled at now from a handler runs after those already at now") {
  Engine engine;
  std::vector<char> order;
  engine.schedule(Time::ns(10), [&] {
    order.push_back('A');
    engine.schedule(engine.now(), [&] { order.push_back('C'); });
  });
  engine.schedule(Time::ns(10), [&] { order.push_back('B'); });
  engine.run();
  CHECK(order == std::vector<char>{'A', 'B', 'C'});
  CHECK(engine.now() == Time::ns(10));
}

TEST_CASE("engine: scheduling in the past is a caller bug and throws") {
  Engine engine;
  engine.schedule(Time::ns(10), [] {});
  engine.run();
  REQUIRE(engine.now() == Time::ns(10));
  CHECK_THROWS_AS(engine.schedule(Time::ns(9), [] {}), trnsim::InternalError);
  CHECK_THROWS_AS(engine.schedule_in(Time::ps(-1), [] {}), trnsim::InternalError);
  CHECK_THROWS_AS(engine.schedule_in(Time::max(), [] {}), std::overflow_error);
  CHECK(engine.pending() == 0);
  CHECK_NOTHROW(engine.schedule(Time::ns(10), [] {}));  // now itself is not the past
  CHECK(engine.pending() == 1);
}

TEST_CASE("engine: run from inside a handler throws, and a handler's exception leaves the engine usable") {
  Engine engine;
  engine.schedule(Time::ns(1), [&] { engine.run(); });
  CHECK_THROWS_AS(engine.run(), trnsim::InternalError);
  CHECK(engine.events_processed() == 1);

  engine.schedule(Time::ns(2), [] { throw std::runtime_error("model failure"); });
  int later = 0;
  engine.schedule(Time::ns(3), [&later] { ++later; });
  CHECK_THROWS_AS(engine.run(), std::runtime_error);
  CHECK(engine.now() == Time::ns(2));
  CHECK(engine.pending() == 1);
  engine.run();
  CHECK(later == 1);
  CHECK(engine.events_processed() == 3);
}

TEST_CASE("engine: an InlineHandler built ahead can be moved into schedule") {
  Engine engine;
  int runs = 0;
  trnsim::sim::InlineHandler later([&runs] { ++runs; });
  engine.schedule(Time::ns(4), std::move(later));
  CHECK_FALSE(static_cast<bool>(later));  // NOLINT(bugprone-use-after-move): moved into the engine
  engine.run();
  CHECK(runs == 1);
  CHECK(engine.now() == Time::ns(4));
}
