#pragma once
// Collective operations and their schedules. A schedule is a list of phases; a phase is one step
// pattern (which rank sends how many bytes to whom) repeated `repeats` times. Step order is per
// rank: a rank starts its transfers of step k once every transfer of its earlier steps (sent or
// received) has completed; a transfer starts when both of its ranks have reached its step.
// In a reducing phase every receiver adds what it receives into its own buffer, which reads its
// local operand (the same bytes) through its chip's DMA link as well.
// Schedules are independent of the network model that executes them; what a step costs is
// closed_form.hpp's.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "trnsim/enum_names.hpp"
#include "trnsim/hw/device_map.hpp"

namespace trnsim::net {

enum class CollectiveOp : std::uint8_t { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast, SendRecv };
constexpr auto enum_table(CollectiveOp) {
  using enum CollectiveOp;
  return std::array{EnumName{AllReduce, "all-reduce"}, EnumName{ReduceScatter, "reduce-scatter"},
                    EnumName{AllGather, "all-gather"}, EnumName{AllToAll, "all-to-all"},
                    EnumName{Broadcast, "broadcast"},  EnumName{SendRecv, "send-recv"}};
}
enum class Algorithm : std::uint8_t {
  Auto,               // the collective library's choice (CollectivePolicy), else Optimal
  Optimal,            // the smallest closed-form time over every algorithm that can run it (what-if)
  Ring,               // unidirectional ring
  BidirectionalRing,  // two rings in opposite directions, half the data each
  Hierarchical,       // inside the instance, across instances, inside again
  HierarchicalMesh,   // the same three stages, each one mesh step (Neuron's small-message "Mesh+Mesh")
  Torus2D,            // rows of the 2D torus, then columns (all-reduce)
  HalvingDoubling,    // recursive halving (reduce-scatter) and doubling (all-gather); binomial broadcast
  Direct,             // every rank to every other at once (all-to-all, mesh); point-to-point send/recv
};
constexpr auto enum_table(Algorithm) {
  using enum Algorithm;
  return std::array{EnumName{Auto, "auto"},         EnumName{Optimal, "optimal"},
                    EnumName{Ring, "ring"},         EnumName{BidirectionalRing, "bidirectional-ring"},
                    EnumName{Hierarchical, "hierarchical"}, EnumName{HierarchicalMesh, "hierarchical-mesh"},
                    EnumName{Torus2D, "torus-2d"},
                    EnumName{HalvingDoubling, "halving-doubling"}, EnumName{Direct, "direct"}};
}
inline constexpr Algorithm kConcreteAlgorithms[] = {Algorithm::Ring, Algorithm::BidirectionalRing,
                                                    Algorithm::Hierarchical, Algorithm::HierarchicalMesh,
                                                    Algorithm::Torus2D,
                                                    Algorithm::HalvingDoubling, Algorithm::Direct};

using trnsim::to_string;  // spellings from the tables above (enum_names.hpp)
// Names as on the command line: all-reduce, reduce-scatter, all-gather, all-to-all, broadcast,
// send-recv; ring, bidirectional-ring (bi-ring), hierarchical, hierarchical-mesh, torus-2d,
// halving-doubling, direct,
// auto, optimal.
// Throw InputError naming the accepted values.
CollectiveOp parse_op(std::string_view s);
Algorithm parse_algorithm(std::string_view s);

// nccl-tests bus bandwidth factor: all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all
// (n-1)/n; broadcast and send/recv 1.
double bus_bandwidth_factor(CollectiveOp op, int ranks);

struct Collective {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::vector<int> ranks;  // global ranks; broadcast: ranks[0] is the root; send/recv: {from, to}
  double bytes = 0;        // the size as nccl-tests defines it (all-gather: the gathered output;
                           // reduce-scatter: the input; all-to-all: one rank's whole buffer)
  Algorithm algorithm = Algorithm::Auto;
};

struct Transfer {
  int src = 0;  // global ranks
  int dst = 0;
  double bytes = 0;
};

// At most one transfer per (sender, receiver) in a phase: what a rank sends to one peer in a step
// is one DMA stream (Calibration::stream_rate), so every algorithm merges what it would send a
// peer twice (a ring in both directions on two ranks sends the whole chunk once each way).
struct Phase {
  std::vector<Transfer> transfers;
  int repeats = 1;
  bool reduce = false;  // each receiver reduces what it receives into its buffer
};

struct Schedule {
  Algorithm algorithm = Algorithm::Ring;
  std::vector<Phase> phases;
  int steps() const;
  double bytes_sent() const;  // over all steps
};

// Whether an algorithm can run this collective on this cluster; on false, `why` says why.
bool supports(Algorithm a, const Collective& c, const hw::ClusterSpec& cluster, const hw::DeviceMap& devices,
              std::string_view* why = nullptr);
// Contract: the schedule of a concrete algorithm (not Auto or Optimal). Throws InputError when the algorithm
// does not support the collective (with the reason), or for a bad group (empty, repeated or
// out-of-range ranks, send/recv without exactly two ranks, negative size).
Schedule make_schedule(const Collective& c, Algorithm a, const hw::ClusterSpec& cluster, const hw::DeviceMap& devices);

// Ranks in the order a ring visits them: by instance, then chips in snake order over the torus
// (x forward on even rows, backward on odd rows, so consecutive chips are neighbours and the last
// row wraps to the first), then logical core. Other topologies: by rank.
std::vector<int> ring_order(std::vector<int> ranks, const hw::ClusterSpec& cluster, const hw::DeviceMap& devices);

}  // namespace trnsim::net
