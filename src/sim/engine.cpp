#include "trnsim/sim/engine.hpp"

#include <limits>

#include <fmt/format.h>

#include "trnsim/error.hpp"

namespace trnsim::sim {

static_assert(sizeof(InlineHandler) + sizeof(std::uint64_t) <= 64,
              "an event record is meant to fill one 64-byte cache line");

Engine::Engine() {
  // Records are the one likely cache miss per event: start fetching a bucket's worth of them
  // as soon as the queue knows they are next (tens of events ahead).
  queue_.observe_refills(
      [](void* context, const EventKey* first, const EventKey* last) {
        Engine& engine = *static_cast<Engine*>(context);
        // Into L2 (locality 2): a bucket's records can outgrow L1 before the last of them runs.
        for (const EventKey* k = first; k != last; ++k) {
          __builtin_prefetch(&engine.record(k->slot()), 0, 2);
        }
      },
      this);
}
Engine::~Engine() = default;

EventId Engine::enqueue(Time at, std::uint32_t slot) {
  EventRecord& rec = record(slot);
  try {
    queue_.push(at, slot);
  } catch (...) {
    rec.handler.reset();
    records_.release(slot);
    throw;
  }
  rec.serial = next_serial_++;
  ++live_;
  return EventId(slot, rec.serial);
}

bool Engine::cancel(EventId id) noexcept {
  if (!id.valid() || !records_.holds(id.slot_)) return false;
  EventRecord& rec = record(id.slot_);
  if (rec.serial != id.serial_) return false;  // already run, running, cancelled or reused
  rec.serial = 0;
  rec.handler.reset();
  --live_;
  // The key stays queued until it reaches the front; compacting once dead keys outnumber live
  // ones (plus slack) keeps the queue and the record pool within twice the pending count.
  if (queue_.size() - live_ > live_ + kCompactionSlack) compact();
  return true;
}

void Engine::compact() noexcept {
  queue_.remove_if([this](std::uint32_t slot) { return record(slot).serial == 0; },
                   [this](std::uint32_t slot) { records_.release(slot); });
}

void Engine::run() { run_through(std::numeric_limits<Time::Rep>::max()); }

void Engine::run_until(Time t) {
  if (t.picoseconds() < now_) {
    throw InternalError(fmt::format("sim::Engine::run_until({} ps) is before now ({} ps)",
                                    t.picoseconds(), now_));
  }
  run_through(t.picoseconds());
  now_ = t.picoseconds();
}

void Engine::run_through(Time::Rep limit) {
  if (running_) throw InternalError("sim::Engine: run() or run_until() called from inside a handler");
  running_ = true;
  // Returns the record of the event being run to the pool even when its handler throws.
  struct Finish {
    Engine& engine;
    std::uint32_t slot = 0;
    bool armed = false;
    void release() noexcept {
      engine.record(slot).handler.reset();
      engine.records_.release(slot);
      armed = false;
    }
    ~Finish() {
      if (armed) release();
      engine.running_ = false;
    }
  } finish{*this};

  while (!queue_.empty()) {
    const EventKey key = queue_.top();
    if (key.time > limit) break;
    queue_.pop();
    const std::uint32_t slot = key.slot();
    EventRecord& rec = record(slot);
    if (rec.serial == 0) {  // cancelled: its handler is already gone
      records_.release(slot);
      continue;
    }
    rec.serial = 0;  // running: cancel() of this event is now a no-op
    --live_;
    now_ = key.time;
    ++processed_;
    finish.slot = slot;
    finish.armed = true;
    rec.handler();
    finish.release();
  }
}

void Engine::throw_in_past(Time at) const {
  throw InternalError(fmt::format("sim::Engine::schedule at {} ps, before now ({} ps)",
                                  at.picoseconds(), now_));
}

void Engine::throw_negative_delay(Time delay) {
  throw InternalError(fmt::format("sim::Engine::schedule_in with negative delay {} ps",
                                  delay.picoseconds()));
}

}  // namespace trnsim::sim
