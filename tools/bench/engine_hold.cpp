// Hold-model benchmark of sim::Engine: a fixed population of pending events, each of which, when
// run, schedules one successor after an exponentially distributed increment. This is the classic
// test of a pending-event set (Jones 1986; Vaucher & Duval 1975): the queue size stays constant and
// every event is one pop plus one push at a random depth.
//
// Increments come from a seeded std::mt19937_64 drawn once into a ring of 2^16 values, so the RNG and
// the exponential's log() are not part of the measured cost. Prints events per second of 5 timed
// repetitions, then their median. The rate is per second of this thread's CPU time, so that time
// spent descheduled on a shared machine does not count; wall-clock rates are printed beside it.
//
// Usage: trnsim_bench_engine [pending=100000] [holds=10000000]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>
#include <random>
#include <vector>

#include "trnsim/sim/engine.hpp"

// Counts heap allocations, to show that steady-state holds do not allocate. Replacing the global
// operator new is fine here: this program is the only user.
namespace {
std::uint64_t g_allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align) {
  ++g_allocations;
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using trnsim::sim::Engine;
using trnsim::sim::Time;

constexpr double kMeanIncrementPs = 1'000'000.0;  // 1 us mean increment
constexpr std::size_t kRingSize = std::size_t{1} << 16;

struct Increments {
  std::vector<Time> ring;
  std::size_t next = 0;
  Time draw() {
    const Time t = ring[next];
    next = (next + 1) & (kRingSize - 1);
    return t;
  }
};

struct Hold {
  Engine* engine;
  Increments* increments;
  void operator()() const { engine->schedule_in(increments->draw(), *this); }
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Rate {
  double per_cpu_second;
  double per_wall_second;
};

Rate run_holds(Engine& engine, std::uint64_t holds, std::size_t pending) {
  // With `pending` events and mean increment m, events occur at rate pending / m per unit of
  // simulated time, so `holds` events take about holds * m / pending of it.
  const auto span = static_cast<Time::Rep>(static_cast<double>(holds) * kMeanIncrementPs /
                                           static_cast<double>(pending));
  const std::uint64_t before = engine.events_processed();
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu_seconds();
  engine.run_until(engine.now() + Time::ps(span));
  const double cpu = thread_cpu_seconds() - cpu_start;
  const auto wall = std::chrono::steady_clock::now() - wall_start;
  const auto events = static_cast<double>(engine.events_processed() - before);
  return {events / cpu, events / std::chrono::duration<double>(wall).count()};
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t pending = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100'000;
  const std::uint64_t holds = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10'000'000;
  if (pending == 0 || holds == 0) {
    std::fprintf(stderr, "usage: trnsim_bench_engine [pending>0] [holds>0]\n");
    return 2;
  }

  std::mt19937_64 rng(20240601);
  std::exponential_distribution<double> exp_dist(1.0 / kMeanIncrementPs);
  Increments increments;
  increments.ring.reserve(kRingSize);
  for (std::size_t i = 0; i < kRingSize; ++i) {
    increments.ring.push_back(Time::ps(static_cast<Time::Rep>(exp_dist(rng))));
  }

  Engine engine;
  for (std::size_t i = 0; i < pending; ++i) engine.schedule(increments.draw(), Hold{&engine, &increments});
  run_holds(engine, holds, pending);  // warm-up: the heap reaches its steady-state shape

  std::vector<double> cpu_rates, wall_rates;
  cpu_rates.reserve(5);
  wall_rates.reserve(5);
  const std::uint64_t allocations_before = g_allocations;
  const std::uint64_t events_before = engine.events_processed();
  for (int rep = 0; rep < 5; ++rep) {
    const std::uint64_t allocations_then = g_allocations;
    const Rate r = run_holds(engine, holds, pending);
    cpu_rates.push_back(r.per_cpu_second);
    wall_rates.push_back(r.per_wall_second);
    std::printf("run %d: %.3g events per CPU second (%.3g per wall second), %llu allocations\n",
                rep + 1, r.per_cpu_second, r.per_wall_second,
                static_cast<unsigned long long>(g_allocations - allocations_then));
  }
  const std::uint64_t allocations = g_allocations - allocations_before;
  const std::uint64_t events = engine.events_processed() - events_before;
  std::sort(cpu_rates.begin(), cpu_rates.end());
  std::sort(wall_rates.begin(), wall_rates.end());
  std::printf("hold model, %zu pending, %llu holds per run: median %.3g events/s of CPU time "
              "(%.1f ns/event); wall-clock median %.3g events/s\n",
              pending, static_cast<unsigned long long>(holds), cpu_rates[2], 1e9 / cpu_rates[2],
              wall_rates[2]);
  std::printf("heap allocations during the timed runs: %llu for %llu events\n",
              static_cast<unsigned long long>(allocations), static_cast<unsigned long long>(events));
  return 0;
}
