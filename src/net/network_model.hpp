#pragma once
// Net-internal: the interface every network model implements, and the context they share.
// net::Network (include/trnsim/net/network.hpp) owns one context and one model, chosen by name
// from the registry (include/trnsim/net/network_models.hpp, rows in network_models.cpp).
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "trnsim/net/analytic_cache.hpp"
#include "trnsim/net/closed_form.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/net/fabric.hpp"
#include "trnsim/net/network.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/net/topology.hpp"
#include "trnsim/sim/engine.hpp"
#include "trnsim/sim/inline_handler.hpp"

namespace trnsim::net {

// Registered replica sets (Network::add_group_set, add_pair_set); ids index these lists.
struct GroupSet {
  int group_size = 0;
  std::vector<int> ranks;  // groups back to back
  std::size_t count() const { return ranks.size() / static_cast<std::size_t>(group_size); }
};
using PairSet = std::vector<std::pair<int, int>>;

// What every model reads: the engine, the topology and its routes, the closed form. Built once
// per Network; never moves (models keep a reference).
struct NetworkContext {
  NetworkContext(std::shared_ptr<Fabric> shared, sim::Engine& sim_engine, CollectivePolicy policy);
  NetworkContext(const NetworkContext&) = delete;
  NetworkContext& operator=(const NetworkContext&) = delete;

  // The closed form's choice of algorithm for `c`, scheduled.
  Schedule schedule(const Collective& c);
  // A point-to-point transfer of `bytes` alone on route `r` (ClosedForm::transfer_time: the same
  // expression in every model, so that they agree to the picosecond).
  sim::Time transfer_time(const Route& r, double bytes) const { return closed_form.transfer_time(r, bytes); }

  std::shared_ptr<Fabric> fabric;
  sim::Engine& engine;
  const Topology& topology;  // the fabric's
  Router& router;            // the fabric's
  ClosedForm closed_form;
  CollectiveCache<sim::Time> expected;  // Network::expected(): closed-form times already computed
  std::vector<GroupSet> group_sets;
  std::vector<PairSet> pair_sets;
};

struct LinkTotals {
  double bytes = 0;   // carried so far
  double busy_s = 0;  // time with traffic on it
};

// Contract for implementations:
//  - start() and start_transfer() begin at engine.now() and run `done` exactly once, from an
//    engine event (never synchronously), when the call completes; they take `done` by rvalue so
//    that forwarding it from the facade moves it once, into its final place.
//  - No allocation per call in steady state (per distinct call, caches may grow).
//  - Deterministic: the same calls at the same times give the same completions and figures.
//  - A model that collapses replicas implements start_group_set() and start_pair_set() with the
//    completion time and link figures of one call per group, in one engine event.
class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual void start(const Collective& c, sim::InlineHandler&& done) = 0;
  virtual void start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler&& done) = 0;
  virtual bool collapses_replicas() const { return false; }
  virtual void start_group_set(const Collective& c, ReplicaSetId set, sim::InlineHandler&& done);
  virtual void start_pair_set(ReplicaSetId set, double bytes, sim::InlineHandler&& done);
  // Link `l`'s traffic so far (report time). O(1), after a first call that may settle what
  // collapsed calls counted (O(their links)).
  virtual LinkTotals link_totals(LinkId l) const = 0;
  // The same for links [first, first + out.size()), into `out`: what a report reads for every
  // link (800 k at 65,536 chips) in one call per chunk rather than one per link. Default: per link.
  virtual void link_totals_range(LinkId first, std::span<LinkTotals> out) const;
  // Calls started while set aside (from set_aside(true) to set_aside(false)) are also counted
  // apart, so that link_totals_range_without_aside() gives the figures of the other calls alone
  // (replay/fast_forward.hpp derives a shorter replay's link figures so). Returns whether the
  // model can: false by default (flow: a link's busy time is not a sum over calls).
  virtual bool set_aside(bool on) {
    (void)on;
    return false;
  }
  // Contract: link_totals_range of the calls not set aside; InternalError where set_aside()
  // returns false.
  virtual void link_totals_range_without_aside(LinkId first, std::span<LinkTotals> out) const;
  // The closed-form time of `c` alone (ClosedForm::estimate) where the model keeps what computes
  // it; nullopt: the caller computes it.
  virtual std::optional<sim::Time> expected(const Collective&) { return std::nullopt; }
  virtual NetworkCounters counters() const = 0;

 protected:
  NetworkModel() = default;
  NetworkModel(const NetworkModel&) = delete;
  NetworkModel& operator=(const NetworkModel&) = delete;
};

}  // namespace trnsim::net
