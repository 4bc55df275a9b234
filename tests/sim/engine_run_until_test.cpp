#include <catch2/catch.hpp>

#include <vector>

#include "trnsim/error.hpp"
#include "trnsim/sim/engine.hpp"

using trnsim::sim::Engine;
using trnsim::sim::Time;

TEST_CASE("engine: run_until runs events before and at the limit, not after, and stops the clock there") {
  Engine engine;
  std::vector<int> ran;
  for (int t : {10, 20, 30}) engine.schedule(Time::ns(t), [&ran, t] { ran.push_back(t); });

  SECTION("before an event: it does not run, the clock stops at the limit") {
    engine.run_until(Time::ns(19));
    CHECK(ran == std::vector<int>{10});
    CHECK(engine.now() == Time::ns(19));
    CHECK(engine.pending() == 2);
  }
  SECTION("exactly at an event: it runs (the boundary is inclusive)") {
    engine.run_until(Time::ns(20));
    CHECK(ran == std::vector<int>{10, 20});
    CHECK(engine.now() == Time::ns(20));
    CHECK(engine.pending() == 1);
  }
  SECTION("after the last event: all run, the clock moves on to the limit") {
    engine.run_until(Time::ns(35));
    CHECK(ran == std::vector<int>{10, 20, 30});
    CHECK(engine.now() == Time::ns(35));
    CHECK(engine.pending() == 0);
  }
}

TEST_CASE("engine: run_until also runs events that handlers schedule at exactly the limit") {
  Engine engine;
  std::vector<char> ran;
  engine.schedule(Time::ns(20), [&] {
    ran.push_back('A');
    engine.schedule_in(Time::zero(), [&] { ran.push_back('B'); });
    engine.schedule_in(Time::ps(1), [&] { ran.push_back('C'); });
  });
  engine.run_until(Time::ns(20));
  CHECK(ran == std::vector<char>{'A', 'B'});
  CHECK(engine.pending() == 1);
  engine.run();
  CHECK(ran == std::vector<char>{'A', 'B', 'C'});
  CHECK(engine.now() == Time::ps(20'001));
}

TEST_CASE("engine: run_until before now throws, and consecutive calls continue where they stopped") {
  Engine engine;
  int ran = 0;
  engine.schedule(Time::ns(30), [&ran] { ++ran; });
  engine.run_until(Time::ns(25));
  CHECK_THROWS_AS(engine.run_until(Time::ns(24)), trnsim::InternalError);
  CHECK(engine.now() == Time::ns(25));
  engine.run_until(Time::ns(25));  // an empty step is fine
  CHECK(ran == 0);
  engine.run_until(Time::ns(30));
  CHECK(ran == 1);
  // schedule_in after run_until counts from the limit where the clock stopped.
  engine.run_until(Time::ns(40));
  Time fired;
  engine.schedule_in(Time::ns(2), [&] { fired = engine.now(); });
  engine.run();
  CHECK(fired == Time::ns(42));
}
