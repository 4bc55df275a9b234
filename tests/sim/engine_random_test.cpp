#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "trnsim/sim/engine.hpp"

using trnsim::sim::Engine;
using trnsim::sim::EventId;
using trnsim::sim::Time;

namespace {

// What a run did, in order: the label and time of every event run, and every cancel's result.
struct Trace {
  std::vector<std::int64_t> entries;
  bool operator==(const Trace&) const = default;
};

// The model both simulators run: each event, when run, schedules 0-2 new events (a quarter of them
// at the current time, the rest up to 1000 ps later) and sometimes cancels an earlier one (which may
// have run already). Decisions come from one RNG, so equal traces need equal event order.
constexpr int kInitial = 200;
constexpr int kMaxScheduled = 20'000;

// Reference: a plain list scanned for the smallest (time, scheduling index) each step.
Trace run_reference() {
  struct Item {
    std::int64_t time;
    bool done;
  };
  std::vector<Item> items;
  std::mt19937_64 rng(11);
  Trace trace;
  std::int64_t now = 0;
  const auto schedule = [&](std::int64_t at) { items.push_back({at, false}); };
  for (int i = 0; i < kInitial; ++i) schedule(static_cast<std::int64_t>(rng() % 1000));
  for (;;) {
    std::size_t best = items.size();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].done && (best == items.size() || items[i].time < items[best].time)) best = i;
    }
    if (best == items.size()) break;
    items[best].done = true;
    now = items[best].time;
    trace.entries.push_back(static_cast<std::int64_t>(best));
    trace.entries.push_back(now);
    const auto spawn = rng() % 3;
    for (std::uint64_t s = 0; s < spawn && items.size() < kMaxScheduled; ++s) {
      schedule(rng() % 4 == 0 ? now : now + static_cast<std::int64_t>(rng() % 1000));
    }
    if (rng() % 4 == 0) {
      const std::size_t victim = rng() % items.size();
      const bool cancelled = !items[victim].done;
      items[victim].done = true;
      trace.entries.push_back(cancelled ? -1 : -2);
    }
  }
  return trace;
}

struct EngineModel {
  Engine engine;
  std::vector<EventId> ids;
  std::mt19937_64 rng{11};
  Trace trace;

  void schedule(Time at) {
    const auto label = static_cast<std::int64_t>(ids.size());
    ids.push_back(engine.schedule(at, [this, label] { on_run(label); }));
  }
  void on_run(std::int64_t label) {
    const Time now = engine.now();
    trace.entries.push_back(label);
    trace.entries.push_back(now.picoseconds());
    const auto spawn = rng() % 3;
    for (std::uint64_t s = 0; s < spawn && ids.size() < kMaxScheduled; ++s) {
      schedule(rng() % 4 == 0 ? now : now + Time::ps(static_cast<Time::Rep>(rng() % 1000)));
    }
    if (rng() % 4 == 0) {
      const std::size_t victim = rng() % ids.size();
      trace.entries.push_back(engine.cancel(ids[victim]) ? -1 : -2);
    }
  }
};

}  // namespace

TEST_CASE("engine: random schedules and cancellations from handlers match a reference simulator") {
  const Trace expected = run_reference();
  EngineModel model;
  for (int i = 0; i < kInitial; ++i) model.schedule(Time::ps(static_cast<Time::Rep>(model.rng() % 1000)));
  model.engine.run();
  REQUIRE(expected.entries.size() > 10'000);  // the model really ran a long, branching history
  CHECK(model.trace == expected);
  CHECK(model.engine.pending() == 0);
}
