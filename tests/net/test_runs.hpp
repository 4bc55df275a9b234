#pragma once
// Collectives run on a fresh network for the net tests: one alone, or two started together.
#include <memory>
#include <utility>

#include "trnsim/net/fabric.hpp"
#include "trnsim/net/network.hpp"

namespace trnsim::test {

// Two analytic networks on fabrics of their own for one cluster: `each` for one call per group or
// pair (the reference), `sets` for replica-set calls; neither reuses the other's routes.
struct AnalyticTwins {
  explicit AnalyticTwins(const hw::ClusterSpec& c)
      : each_fabric(std::make_shared<net::Fabric>(c)),
        set_fabric(std::make_shared<net::Fabric>(c)),
        each(each_fabric, net::NetworkModelKind::Analytic, each_engine),
        sets(set_fabric, net::NetworkModelKind::Analytic, set_engine) {}
  sim::Engine each_engine, set_engine;
  std::shared_ptr<net::Fabric> each_fabric, set_fabric;
  net::Network each, sets;
};

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
