#pragma once
// The network as the replay executor and the CLI see it: a cluster's topology and routes, and one
// network model chosen by name (network_models.hpp), driven by a sim::Engine.
//  - analytic: each call completes after its closed-form time (closed_form.hpp); calls do not
//    see each other.
//  - flow: every call and point-to-point transfer in flight shares the same links max-min fairly,
//    so they contend; what is simulated, and at what grain, is the flow-model contract in
//    src/net/flow_model.hpp.
// Replicas (a symmetric simulation's identical groups) start as one call on a registered set of
// groups or point-to-point pairs: the analytic model answers it with one engine event whatever
// the number of groups (collapses_replicas); the other models leave it to the caller to start
// one call per group, so that the groups' flows contend.
// The models live in src/net/ behind the NetworkModel interface (src/net/network_model.hpp); this
// facade holds what they share (topology, router, closed form) and forwards each call with one
// indirect call per call, none per flow event.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "trnsim/hw/specs.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/net/collective_policy.hpp"
#include "trnsim/net/network_models.hpp"
#include "trnsim/net/topology.hpp"
#include "trnsim/sim/engine.hpp"
#include "trnsim/sim/inline_handler.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::net {

struct Fabric;  // fabric.hpp

// A registered set of groups or of point-to-point pairs (Network::add_group_set, add_pair_set).
using ReplicaSetId = std::uint32_t;

// One link's traffic, 24 bytes: at 65,536 trn2u chips a step lists 655,360 links and a report
// shows ten of them. Its ends and bandwidth are the topology's (Topology::link(id), the names below).
struct LinkUsage {
  LinkId id = 0;
  LinkKind kind = LinkKind::Dma;
  double bytes = 0;   // carried so far
  double busy_s = 0;  // flow: time with a flow on it; analytic: bytes / bandwidth
};
// A link's ends as reports name them ("chip12", "leaf3"); a DMA link loops on its chip, one per
// rank (Topology::dma_link), and its destination is named by the rank it serves.
std::string source_name(const Topology& topology, LinkId l);
std::string destination_name(const Topology& topology, LinkId l);

// What a model has done so far; the flow model's figures are zero on the analytic model.
struct NetworkCounters {
  std::size_t in_flight = 0;    // flow: calls and transfers started and not yet completed
  double bytes_delivered = 0;   // flow: bytes delivered, fast-path calls included
  std::uint64_t fast = 0;       // flow: calls and transfers completed on the fast path
  std::uint64_t converted = 0;  // flow: fast-path calls turned into flows by a later arrival
  std::uint64_t coarse = 0;     // flow: calls and transfers started in their coarse form
  std::uint64_t flows = 0;          // flow: flows completed by the solver the calls share
  std::uint64_t flow_events = 0;    // flow: flow starts and finishes that solver processed
  std::size_t shapes = 0;           // flow: distinct calls measured alone (FlowShapes)
  std::uint64_t shape_flows = 0;    // flow: flows completed while measuring them
  std::uint64_t shape_events = 0;   // flow: flow starts and finishes processed while measuring them
};

class Network {
 public:
  // Contract: builds the topology (O(chips + links)) and the model `kind`; the engine must outlive
  // the network. `policy` is the collective library's choice of algorithm for calls whose
  // algorithm is Auto (the software preset's; the default, no rules, takes the optimum).
  Network(const hw::ClusterSpec& cluster, NetworkModelKind kind, sim::Engine& engine, CollectivePolicy policy = {});
  // The same on a fabric built before (fabric.hpp), shared with networks of other plans on its
  // cluster, one at a time: no topology to build, and the routes they found are not searched again.
  Network(std::shared_ptr<Fabric> fabric, NetworkModelKind kind, sim::Engine& engine, CollectivePolicy policy = {});
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Begins `c` at engine.now() and runs `done` once, from an engine event, when it completes.
  // Analytic: after estimate(c). Flow: when its last transfer is delivered. Throws InputError for
  // a bad group or an algorithm that cannot run it.
  void start(const Collective& c, sim::InlineHandler done);
  // Point-to-point (pipeline send/recv): `bytes` from src_rank to dst_rank, costing what a
  // one-step, one-message send-recv collective costs (ClosedForm::transfer_time).
  void start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler done);

  // Replicas. Contract: registers groups of `group_size` ranks each, back to back in `ranks`
  // (InputError unless group_size > 0 divides ranks.size()); O(ranks), a copy.
  ReplicaSetId add_group_set(std::span<const std::int32_t> ranks, int group_size);
  // Contract: registers point-to-point pairs (src rank, dst rank) that move the same bytes
  // together; InputError for a rank outside the cluster; O(pairs), a copy.
  ReplicaSetId add_pair_set(std::span<const std::pair<std::int32_t, std::int32_t>> pairs);
  // True when this model starts a set as one call (start_group_set, start_pair_set): analytic.
  bool collapses_replicas() const;
  // Contract: where collapses_replicas(), begins `c` (its ranks ignored) on every group of `set`
  // at engine.now() and runs `done` once, from one engine event, when the last group completes:
  // the completion time and the link traffic of one start() per group, at O(1) per call after the
  // first of each distinct (set, op, algorithm, bytes). InternalError elsewhere.
  void start_group_set(const Collective& c, ReplicaSetId set, sim::InlineHandler done);
  // The same for start_transfer() on every pair of a pair set.
  void start_pair_set(ReplicaSetId set, double bytes, sim::InlineHandler done);

  // Closed-form time of `c` alone on the network (the analytic model, whatever this network's model).
  sim::Time estimate(const Collective& c);
  // The same, memoized per distinct (op, algorithm, bytes, ranks): for callers that ask often.
  // The analytic model answers from its replica-set pricing (the same picoseconds): it schedules
  // and routes the group there, where a set call on the same group finds them.
  sim::Time expected(const Collective& c);
  // The algorithm `c` runs (ClosedForm::choose): Auto the policy's choice, Optimal the analytic
  // optimum, a concrete algorithm as is.
  Algorithm choose(const Collective& c);

  NetworkModelKind kind() const { return kind_; }
  const Topology& topology() const;
  // Sets aside the calls started from now on (on) or stops (off): link_usage(true) then leaves
  // them out. Returns whether the model can (analytic; not flow). What a fast-forward derives a
  // shorter replay's link figures from (replay/fast_forward.hpp).
  bool set_aside(bool on);
  // Per link with traffic, in link order; `without_aside`: of the calls not set aside (only where
  // set_aside() returned true; InternalError otherwise). O(links).
  std::vector<LinkUsage> link_usage(bool without_aside = false) const;
  NetworkCounters counters() const;

 private:
  NetworkModelKind kind_;
  std::unique_ptr<NetworkContext> context_;
  std::unique_ptr<NetworkModel> model_;
};

}  // namespace trnsim::net
