#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "trnsim/sim/engine.hpp"

using trnsim::sim::Engine;
using trnsim::sim::EventId;
using trnsim::sim::Time;

TEST_CASE("engine: a cancelled event never runs, and cancelling again is harmless") {
  Engine engine;
  std::vector<int> ran;
  engine.schedule(Time::ns(1), [&] { ran.push_back(1); });
  const EventId two = engine.schedule(Time::ns(2), [&] { ran.push_back(2); });
  engine.schedule(Time::ns(3), [&] { ran.push_back(3); });
  CHECK(engine.cancel(two));
  CHECK(engine.pending() == 2);
  CHECK_FALSE(engine.cancel(two));
  CHECK(engine.pending() == 2);
  CHECK_FALSE(engine.cancel(EventId{}));
  engine.run();
  CHECK(ran == std::vector<int>{1, 3});
  CHECK(engine.events_processed() == 2);
}

TEST_CASE("engine: cancelling after the event ran, or from inside it, does nothing") {
  Engine engine;
  EventId self;
  bool cancelled_self = true;
  self = engine.schedule(Time::ns(1), [&] { cancelled_self = engine.cancel(self); });
  engine.run();
  CHECK_FALSE(cancelled_self);
  CHECK_FALSE(engine.cancel(self));
  // The record of the finished event is reused for the next one; the stale handle must not hit it.
  int runs = 0;
  engine.schedule(Time::ns(2), [&runs] { ++runs; });
  CHECK_FALSE(engine.cancel(self));
  engine.run();
  CHECK(runs == 1);
}

TEST_CASE("engine: a handler may cancel a later event at the same time") {
  Engine engine;
  std::vector<char> ran;
  EventId b;
  engine.schedule(Time::ns(5), [&] {
    ran.push_back('A');
    CHECK(engine.cancel(b));
  });
  b = engine.schedule(Time::ns(5), [&] { ran.push_back('B'); });
  engine.schedule(Time::ns(5), [&] { ran.push_back('C'); });
  engine.run();
  CHECK(ran == std::vector<char>{'A', 'C'});
}

TEST_CASE("engine: cancel destroys the handler's captures at once") {
  Engine engine;
  auto token = std::make_shared<int>(0);
  const EventId id = engine.schedule(Time::ns(1), [token] {});
  CHECK(token.use_count() == 2);
  engine.cancel(id);
  CHECK(token.use_count() == 1);
}

TEST_CASE("engine: a million schedule and cancel cycles reuse a bounded pool of records") {
  Engine engine;
  int ran = 0;
  // Ten live events that do run, plus a stream of far-future events each cancelled at once.
  for (int i = 0; i < 10; ++i) engine.schedule(Time::us(1), [&ran] { ++ran; });
  for (int i = 0; i < 1'000'000; ++i) {
    const EventId id = engine.schedule(Time::seconds(1.0), [&ran] { ran += 1000; });
    REQUIRE(engine.cancel(id));
  }
  // Cancelled keys are reclaimed once they outnumber live ones by more than 1024, so at most
  // 10 live + 1035 dead + 1 new records are ever in use: the pool keeps its first chunk of 4096.
  CHECK(engine.record_capacity() == 4096);
  CHECK(engine.pending() == 10);
  engine.run();
  CHECK(ran == 10);
  CHECK(engine.now() == Time::us(1));
  CHECK(engine.events_processed() == 10);
}

TEST_CASE("engine: records are reused when events run, so the pool follows the peak of pending") {
  Engine engine;
  // One self-rescheduling event: 100,000 events over time, never more than one pending.
  int remaining = 100'000;
  struct Tick {
    Engine* engine;
    int* remaining;
    void operator()() const {
      if (--*remaining > 0) engine->schedule_in(Time::ns(1), *this);
    }
  };
  engine.schedule(Time::zero(), Tick{&engine, &remaining});
  engine.run();
  CHECK(engine.events_processed() == 100'000);
  CHECK(engine.now() == Time::ns(99'999));  // first at 0, then 99,999 steps of 1 ns
  CHECK(engine.record_capacity() == 4096);
}
