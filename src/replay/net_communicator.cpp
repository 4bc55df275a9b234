#include "trnsim/replay/net_communicator.hpp"

#include <utility>

namespace trnsim::replay {

NetCommunicator::NetCommunicator(net::Network& network, net::Algorithm algorithm)
    : network_(network), algorithm_(algorithm) {}

std::uint32_t NetCommunicator::open_join(std::uint32_t parts, sim::InlineHandler done) {
  const std::uint32_t slot = joins_.acquire();
  joins_[slot].parts.arm(parts);
  joins_[slot].done = std::move(done);
  return slot;
}

void NetCommunicator::part_done(std::uint32_t slot) {
  Join& join = joins_[slot];
  if (!join.parts.count_down()) return;
  sim::InlineHandler done = std::move(join.done);
  joins_.release(slot);
  done();
}

void NetCommunicator::start_collective(const workload::Collective& c, sim::InlineHandler done) {
  scratch_.op = c.op;
  scratch_.bytes = c.bytes;
  scratch_.algorithm = algorithm_;
  if (c.groups.size() == 1) {
    scratch_.ranks.assign(c.groups[0].begin(), c.groups[0].end());
    network_.start(scratch_, std::move(done));
    return;
  }
  const std::uint32_t slot = open_join(static_cast<std::uint32_t>(c.groups.size()), std::move(done));
  for (const auto& group : c.groups) {
    scratch_.ranks.assign(group.begin(), group.end());
    network_.start(scratch_, sim::InlineHandler([this, slot] { part_done(slot); }));
  }
}

double NetCommunicator::expected_seconds(const workload::Collective& c) {
  if (c.groups.empty()) return 0;
  scratch_.op = c.op;
  scratch_.bytes = c.bytes;
  scratch_.algorithm = algorithm_;
  scratch_.ranks.assign(c.groups[0].begin(), c.groups[0].end());
  return network_.expected(scratch_).to_seconds();
}

void NetCommunicator::start_transfer(std::int32_t src, std::int32_t dst, double bytes,
                                     std::span<const RankPair> replicas, sim::InlineHandler done) {
  if (replicas.empty()) {
    network_.start_transfer(src, dst, bytes, std::move(done));
    return;
  }
  const std::uint32_t slot = open_join(static_cast<std::uint32_t>(replicas.size() + 1), std::move(done));
  network_.start_transfer(src, dst, bytes, sim::InlineHandler([this, slot] { part_done(slot); }));
  for (const auto& [from, to] : replicas) {
    network_.start_transfer(from, to, bytes, sim::InlineHandler([this, slot] { part_done(slot); }));
  }
}

}  // namespace trnsim::replay
