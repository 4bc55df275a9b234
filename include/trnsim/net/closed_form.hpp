#pragma once
// ClosedForm: the closed-form time of a schedule, and the choice of algorithm. Both network
// models use it to choose; the analytic model's times and Network::expected() are its answers.
//
// Per-step physics (the flow model runs the same, collective_run.hpp): with the preset's
// calibration, launch L = collective_launch_s, step S = collective_step_s, message M =
// collective_message_s, a transfer of b bytes from rank u in a step costs
//   M x k(u) + max(S, b / rate) + route latency
// where k(u) is the number of transfers u sends in that step (its messages: 1 on a ring, n-1 on a
// mesh), and rate is the smallest, over its route's links, of bandwidth / load, a link's load
// being the number of the step's own flows crossing it (the group's flows sharing a link evenly,
// as max-min does when they are alike). In a reducing step (Phase::reduce) the receiver also reads
// its local operand, b bytes through its chip's DMA link, a flow of its own in that load; the
// transfer lasts until both are done. A step costs its slowest transfer; a schedule costs L plus
// the sum of its steps. Routes start with the sender's DMA link on Trainium (router.hpp), so a
// chip's DMA throughput limits its core-to-core transfers, its NeuronLink sends and its reductions
// alike. No contention with other collectives.
#include <span>
#include <vector>

#include "trnsim/net/collective.hpp"
#include "trnsim/net/collective_policy.hpp"
#include "trnsim/net/router.hpp"
#include "trnsim/sim/time.hpp"

namespace trnsim::net {

// What one transfer's time in a step depends on besides its bytes: its route, and the shares of
// bandwidth the step's transfers leave it (ClosedForm::phase_terms).
// 48 bytes (the two 32-bit fields side by side): the analytic model keeps one per transfer of
// every group it schedules.
struct TransferTerms {
  Route route;
  LinkId reduce_link = -1;  // a reducing step: the receiver's DMA link, which reads its operand
  int messages = 0;         // transfers its sender sends in the step
  double rate = 0;          // bytes/s: the stream rate capped by its links' shares
  double reduce_rate = 0;   // a reducing step: the share of reduce_link, else 0
};

class ClosedForm {
 public:
  // The router's topology must outlive it; `policy` resolves Auto (choose()).
  ClosedForm(Router& router, CollectivePolicy policy);

  // Contract: O(sum over phases of transfers x hops); routes are cached in the router.
  sim::Time estimate(const Schedule& s);
  // Resolves the algorithm with choose(), builds the schedule and estimates it.
  sim::Time estimate(const Collective& c);
  // The algorithm `c` runs: a concrete one as given; Auto: the policy's choice for its op, size and
  // span (one instance or several), when that algorithm can run it, else Optimal; Optimal:
  // optimum(). O(rules + ranks) for a policy's choice; optimum() builds every candidate schedule.
  Algorithm choose(const Collective& c);
  // Among the concrete algorithms that support `c`, the one with the smallest estimate (ties: the
  // earlier in kConcreteAlgorithms). The direct mesh is a candidate for all-reduce, reduce-scatter
  // and all-gather only up to kMeshMaxRanks ranks.
  Algorithm optimum(const Collective& c);
  static constexpr std::size_t kMeshMaxRanks = 64;

  sim::Time step_time(const Phase& p);
  // The two halves of step_time(p), for callers that price one phase's shape at many sizes:
  // phase_terms appends p's transfers' terms to `out` in transfer order (O(transfers x hops),
  // cached routes); step_time(p, terms) is step_time(p) from them, the same arithmetic, O(transfers).
  void phase_terms(const Phase& p, std::vector<TransferTerms>& out);
  sim::Time step_time(const Phase& p, std::span<const TransferTerms> terms) const;
  // A point-to-point transfer of `bytes` on route `r`: L + M + max(S, bytes / bottleneck) + latency,
  // the cost of a one-step, one-message collective.
  sim::Time transfer_time(const Route& r, double bytes) const;

  const CollectivePolicy& policy() const { return policy_; }

 private:
  Router* router_;
  const Topology* topo_;
  CollectivePolicy policy_;
  std::vector<int> load_;   // per link, zero between calls
  std::vector<int> sends_;  // per global rank: transfers it sends in the step; zero between calls
  std::vector<LinkId> touched_;
  std::vector<TransferTerms> terms_;  // step_time(p)'s scratch
};

}  // namespace trnsim::net
