#pragma once
// Engine: the discrete-event core. It holds the simulated clock and the pending events, and runs
// them in order of time, then of scheduling (FIFO on ties). Single-threaded, no global state: every
// model that needs time is handed an Engine&.
//
// Storage: each event lives in a 64-byte record (an InlineHandler plus a serial number) taken from a
// SlotPool (slot_pool.hpp): chunks of records reused last-in first-out, so records never move (a
// running handler may schedule without invalidating itself) and steady-state scheduling does not
// allocate. The pending set is an EventQueue of 16-byte keys (time, seq, slot); see event_queue.hpp.
// Records are prefetched when their keys enter the queue's near tier, tens of events before they run.
// Cancellation is lazy: the record is marked dead at once and reclaimed when its key reaches the
// front, or sooner when dead keys outnumber live ones (then the queue is compacted).
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "trnsim/sim/event_queue.hpp"
#include "trnsim/sim/inline_handler.hpp"
#include "trnsim/sim/slot_pool.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::sim {

// Handle to a scheduled event, used only to cancel it. A default EventId refers to no event.
// Handles never alias: each event gets a fresh 64-bit serial, so a stale handle stays harmless.
class EventId {
 public:
  EventId() = default;
  bool valid() const { return serial_ != 0; }
  friend bool operator==(const EventId&, const EventId&) = default;

 private:
  friend class Engine;
  EventId(std::uint32_t slot, std::uint64_t serial) : slot_(slot), serial_(serial) {}
  std::uint32_t slot_ = 0;
  std::uint64_t serial_ = 0;  // 0: no event
};

class Engine {
 public:
  Engine();
  ~Engine();
  // Handlers capture Engine& (or pointers into models that do), so an engine never moves.
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  Engine(Engine&&) = delete;
  Engine& operator=(Engine&&) = delete;

  // Contract: the simulated time of the event being run, or where the last run stopped; starts at
  // zero. Cost: O(1).
  Time now() const { return Time::ps(now_); }

  // Contract: runs handler() at time `at` (>= now(), else InternalError: a caller bug), after every
  // event already scheduled for `at`. Cost: O(log pending); no allocation in steady state.
  // The handler (any void() callable, or an InlineHandler moved in) is stored inline: at most 48
  // bytes of captures, checked at compile time (see InlineHandler).
  template <class F>
  EventId schedule(Time at, F&& handler) {
    if (at.picoseconds() < now_) throw_in_past(at);
    const std::uint32_t slot = acquire_slot();
    EventRecord& rec = record(slot);
    try {
      if constexpr (std::is_same_v<std::decay_t<F>, InlineHandler>) {
        static_assert(!std::is_lvalue_reference_v<F>, "pass an InlineHandler by std::move");
        rec.handler = std::move(handler);
      } else {
        rec.handler.emplace(std::forward<F>(handler));
      }
    } catch (...) {
      records_.release(slot);
      throw;
    }
    return enqueue(at, slot);
  }

  // Contract: schedule(now() + delay, handler); delay must be >= 0 (else InternalError), and the sum
  // must not overflow (std::overflow_error). Cost: as schedule.
  template <class F>
  EventId schedule_in(Time delay, F&& handler) {
    if (delay.picoseconds() < 0) throw_negative_delay(delay);
    return schedule(now() + delay, std::forward<F>(handler));
  }

  // Contract: if `id` names a pending event, it will never run: returns true and destroys its
  // handler now. Otherwise (already run, running, cancelled, default handle) does nothing and
  // returns false. Cost: O(1) amortised (an occasional O(pending) compaction bounds dead keys).
  bool cancel(EventId id) noexcept;

  // Contract: runs events in (time, scheduling) order until none is pending; now() ends at the time
  // of the last one. Handlers may schedule and cancel. Must not be called from a handler
  // (InternalError). A handler's exception propagates; its event counts as run and the engine stays
  // usable. Cost: O(log pending) per event.
  void run();

  // Contract: as run(), but runs only events at times <= t: an event at exactly t runs, including
  // ones scheduled at t by handlers running at t. Then now() == t. t < now() is an InternalError.
  // Cost: O(log pending) per event run.
  void run_until(Time t);

  // Contract: number of events whose handler has been called (cancelled ones excluded). O(1).
  std::uint64_t events_processed() const { return processed_; }

  // Contract: number of events scheduled and neither run, running nor cancelled. O(1).
  std::size_t pending() const { return live_; }

  // Contract: number of event records allocated (a diagnostic: it follows the peak of pending plus
  // not-yet-reclaimed cancelled events, never the total scheduled). O(1).
  std::size_t record_capacity() const { return records_.capacity(); }

 private:
  struct alignas(64) EventRecord {
    InlineHandler handler;
    std::uint64_t serial = 0;  // of the pending event held here; 0 when free, cancelled or running
  };
  static constexpr unsigned kChunkBits = 12;  // 4096 records (256 KiB) per chunk
  // Dead keys tolerated in the queue beyond the number of live ones before a compaction.
  static constexpr std::size_t kCompactionSlack = 1024;

  EventRecord& record(std::uint32_t slot) { return records_[slot]; }
  std::uint32_t acquire_slot() { return records_.acquire(); }
  EventId enqueue(Time at, std::uint32_t slot);
  void run_through(Time::Rep limit);
  void compact() noexcept;
  [[noreturn]] void throw_in_past(Time at) const;
  [[noreturn]] static void throw_negative_delay(Time delay);

  Time::Rep now_ = 0;                                 // picoseconds
  std::uint64_t next_serial_ = 1;                     // 0 is reserved for "no event"
  std::uint64_t processed_ = 0;
  std::size_t live_ = 0;                              // pending, not cancelled
  bool running_ = false;                              // inside run()/run_until()
  EventQueue queue_;
  SlotPool<EventRecord, kChunkBits> records_;
};

}  // namespace trnsim::sim
