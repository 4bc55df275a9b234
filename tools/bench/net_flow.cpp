// Flow-model benchmarks (not in ctest):
//  1. an all-reduce over every logical NeuronCore of 64 trn2.48xlarge instances (4,096 ranks);
//  2. 1,024 concurrent flows between random chips of different instances on the EFA Clos.
// Prints simulated time, wall time and events per second (engine, flow solver and the isolated
// solver that computes each distinct call's FlowShape once). Usage: trnsim_bench_net [MiB]
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <numeric>

#include <fmt/core.h>

#include "trnsim/net/network.hpp"

using namespace trnsim;

namespace {
// trn2.48xlarge from shared/data/hardware.md (trn2-arch.rst, trainium2.rst); the latencies are the
// Neuron collectives documentation's "about 1-2 us per hop" and "about 15 us" inter-instance.
hw::ClusterSpec trn2(int instances) {
  hw::ClusterSpec c;
  c.instances = instances;
  auto& i = c.instance;
  i.name = "trn2.48xlarge (bench)";
  i.chips = 16;
  i.topology = hw::IntraTopology::Torus2D;
  i.torus_x = 4;
  i.torus_y = 4;
  i.chip.family = hw::Family::Trainium;
  i.chip.physical_cores = 8;
  i.chip.logical_core_size = 2;
  i.chip.hbm_bandwidth = 2.9e12;
  i.chip.dma_bandwidth = 3.5e12;
  i.intra = {1024e9, 1e-6};
  i.nics = 16;
  i.efa = {3200e9 / 8, 15e-6};
  i.calibration.collective_launch_s = 20e-6;
  i.calibration.collective_step_s = 2e-6;
  c.fabric.switch_latency = 1e-6;
  return c;
}

double wall_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const double mib = argc > 1 ? std::atof(argv[1]) : 256;
  for (auto forced : {net::Algorithm::Auto, net::Algorithm::Hierarchical}) {
    const auto cluster = trn2(64);
    const auto t0 = std::chrono::steady_clock::now();
    sim::Engine engine;
    net::Network net(cluster, net::NetworkModelKind::Flow, engine);
    net::Collective c{net::CollectiveOp::AllReduce, {}, mib * 1024 * 1024, forced};
    c.ranks.resize(static_cast<std::size_t>(net.topology().devices().ranks()));
    std::iota(c.ranks.begin(), c.ranks.end(), 0);
    const auto algorithm = net.choose(c);
    const double setup = wall_since(t0);
    sim::Time done;
    net.start(c, [&] { done = engine.now(); });
    engine.run();
    const double wall = wall_since(t0);
    // The first call of a shape runs it alone, every step a flow, in the isolated solver.
    const auto k = net.counters();
    const auto events = engine.events_processed() + k.flow_events + k.shape_events;
    fmt::print("all-reduce {} MiB over {} ranks (64 x trn2.48xlarge), flow, {} ({}): simulated {:.1f} us, analytic {:.1f} us\n",
               mib, c.ranks.size(), trnsim::to_string(algorithm), forced == net::Algorithm::Auto ? "auto" : "forced", done.to_us(), net.estimate(c).to_us());
    fmt::print("  wall {:.3f} s (choice and setup {:.3f} s), flows {}, events {} ({:.2f} M/s)\n", wall, setup,
               k.flows + k.shape_flows, events, static_cast<double>(events) / wall / 1e6);
  }
  {
    const auto cluster = trn2(64);
    const auto t0 = std::chrono::steady_clock::now();
    sim::Engine engine;
    net::Network net(cluster, net::NetworkModelKind::Flow, engine);
    std::uint64_t x = 12345;  // a fixed LCG: the same pairs every run
    auto next = [&] { return (x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    int finished = 0;
    sim::Time last;
    const int ranks = net.topology().devices().ranks(), per_instance = net.topology().devices().ranks_per_instance();
    for (int f = 0; f < 1024; ++f) {
      const int src = static_cast<int>(next() % static_cast<std::uint64_t>(ranks));
      int dst = static_cast<int>(next() % static_cast<std::uint64_t>(ranks));
      if (dst / per_instance == src / per_instance) dst = (dst + per_instance) % ranks;
      const double bytes = static_cast<double>(1 + next() % 64) * 1024 * 1024;
      net.start_transfer(src, dst, bytes, [&] {
        ++finished;
        last = engine.now();
      });
    }
    engine.run();
    const double wall = wall_since(t0);
    const auto k = net.counters();
    const auto events = engine.events_processed() + k.flow_events;
    fmt::print("1,024 concurrent flows (1-64 MiB) between instances on the Clos: {} done, last at {:.1f} us\n", finished,
               last.to_us());
    fmt::print("  wall {:.3f} s, events {} ({:.2f} M/s); fast path {}, converted {}, started coarse {}\n", wall, events,
               static_cast<double>(events) / wall / 1e6, k.fast, k.converted, k.coarse);
  }
  return 0;
}
