#pragma once
// Collectives run on a fresh network for the net tests: one alone, or two started together.
#include <utility>

#include "trnsim/net/network.hpp"

namespace trnsim::test {

// When `coll`, alone on a fresh network of model `m`, completes (Time::max() if it never does).
inline sim::Time run_one(const hw::ClusterSpec& c, net::NetworkModelKind m, const net::Collective& coll,
                         net::CollectivePolicy policy = {}) {
  sim::Engine engine;
  net::Network net(c, m, engine, std::move(policy));
  sim::Time done = sim::Time::max();
  net.start(coll, [&] { done = engine.now(); });
  engine.run();
  return done;
}

// `a` and `b` started together at time 0 on a fresh network of model `m`, run to the end; the
// network stays for its counters and link usage.
struct TwoCalls {
  sim::Engine engine;
  net::Network net;
  sim::Time done_a = sim::Time::max(), done_b = sim::Time::max();

  TwoCalls(const hw::ClusterSpec& c, net::NetworkModelKind m, const net::Collective& a, const net::Collective& b)
      : net(c, m, engine) {
    net.start(a, [this] { done_a = engine.now(); });
    net.start(b, [this] { done_b = engine.now(); });
    engine.run();
  }
};

}  // namespace trnsim::test
