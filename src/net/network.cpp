#include "trnsim/net/network.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "network_model.hpp"
#include "trnsim/error.hpp"
#include "trnsim/huge_pages.hpp"

namespace trnsim::net {

NetworkContext::NetworkContext(std::shared_ptr<Fabric> shared, sim::Engine& sim_engine, CollectivePolicy policy)
    : fabric(std::move(shared)),
      engine(sim_engine),
      topology(fabric->topology),
      router(fabric->router),
      closed_form(router, std::move(policy)) {}

Schedule NetworkContext::schedule(const Collective& c) {
  return make_schedule(c, closed_form.choose(c), topology.cluster(), topology.devices());
}

Network::Network(const hw::ClusterSpec& cluster, NetworkModelKind kind, sim::Engine& engine, CollectivePolicy policy)
    : Network(std::make_shared<Fabric>(cluster), kind, engine, std::move(policy)) {}

Network::Network(std::shared_ptr<Fabric> fabric, NetworkModelKind kind, sim::Engine& engine, CollectivePolicy policy)
    : kind_(kind),
      context_(std::make_unique<NetworkContext>(std::move(fabric), engine, std::move(policy))),
      model_(network_model(kind).make(*context_)) {}

Network::~Network() = default;

void Network::start(const Collective& c, sim::InlineHandler done) { model_->start(c, std::move(done)); }

void Network::start_transfer(int src_rank, int dst_rank, double bytes, sim::InlineHandler done) {
  model_->start_transfer(src_rank, dst_rank, bytes, std::move(done));
}

ReplicaSetId Network::add_group_set(std::span<const std::int32_t> ranks, int group_size) {
  if (group_size <= 0 || ranks.size() % static_cast<std::size_t>(group_size) != 0) {
    throw InputError(fmt::format("network: {} ranks do not form groups of {}", ranks.size(), group_size));
  }
  auto& sets = context_->group_sets;
  sets.push_back(GroupSet{group_size, std::vector<int>(ranks.begin(), ranks.end())});
  return static_cast<ReplicaSetId>(sets.size() - 1);
}

ReplicaSetId Network::add_pair_set(std::span<const std::pair<std::int32_t, std::int32_t>> pairs) {
  // Every rank checked here, once per set (InputError, as a transfer's route would throw): the
  // analytic model routes a pair's image, not the pair itself.
  const hw::DeviceMap& dm = context_->topology.devices();
  for (const auto& [src, dst] : pairs) {
    static_cast<void>(dm.chip_of(src));
    static_cast<void>(dm.chip_of(dst));
  }
  auto& sets = context_->pair_sets;
  sets.emplace_back(pairs.begin(), pairs.end());
  return static_cast<ReplicaSetId>(sets.size() - 1);
}

bool Network::collapses_replicas() const { return model_->collapses_replicas(); }

void Network::start_group_set(const Collective& c, ReplicaSetId set, sim::InlineHandler done) {
  if (set >= context_->group_sets.size()) throw InternalError(fmt::format("network: group set {} of {}", set, context_->group_sets.size()));
  model_->start_group_set(c, set, std::move(done));
}

void Network::start_pair_set(ReplicaSetId set, double bytes, sim::InlineHandler done) {
  if (set >= context_->pair_sets.size()) throw InternalError(fmt::format("network: pair set {} of {}", set, context_->pair_sets.size()));
  model_->start_pair_set(set, bytes, std::move(done));
}

void NetworkModel::start_group_set(const Collective&, ReplicaSetId, sim::InlineHandler&&) {
  throw InternalError("network: this model starts one call per group (collapses_replicas() is false)");
}

void NetworkModel::start_pair_set(ReplicaSetId, double, sim::InlineHandler&&) {
  throw InternalError("network: this model starts one transfer per pair (collapses_replicas() is false)");
}

void NetworkModel::link_totals_range(LinkId first, std::span<LinkTotals> out) const {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = link_totals(first + static_cast<LinkId>(i));
}

sim::Time Network::estimate(const Collective& c) { return context_->closed_form.estimate(c); }

sim::Time Network::expected(const Collective& c) {
  if (const sim::Time* t = context_->expected.find(c)) return *t;
  const std::optional<sim::Time> priced = model_->expected(c);
  return context_->expected.insert(c, priced ? *priced : context_->closed_form.estimate(c));
}

Algorithm Network::choose(const Collective& c) { return context_->closed_form.choose(c); }

const Topology& Network::topology() const { return context_->topology; }

void NetworkModel::link_totals_range_without_aside(LinkId, std::span<LinkTotals>) const {
  throw InternalError("network model: link figures without the calls set aside, from a model that cannot set calls aside");
}

bool Network::set_aside(bool on) { return model_->set_aside(on); }

std::vector<LinkUsage> Network::link_usage(bool without_aside) const {
  std::vector<LinkUsage> out;
  const Topology& topo = context_->topology;
  // Room for every link: moving hundreds of thousands of entries at each doubling cost as much as
  // filling them (65,536 trn2u chips: 802,816 links); the pages of links without traffic stay untouched.
  reserve_huge(out, static_cast<std::size_t>(topo.link_count()));
  // The model's totals a chunk at a time (64 KiB): one virtual call per chunk, not per link.
  std::array<LinkTotals, 4096> chunk;
  for (LinkId first = 0; first < topo.link_count(); first += static_cast<LinkId>(chunk.size())) {
    const auto n = std::min<std::size_t>(chunk.size(), static_cast<std::size_t>(topo.link_count() - first));
    if (without_aside) {
      model_->link_totals_range_without_aside(first, std::span<LinkTotals>(chunk.data(), n));
    } else {
      model_->link_totals_range(first, std::span<LinkTotals>(chunk.data(), n));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const LinkTotals& t = chunk[i];
      if (!(t.bytes > 0)) continue;
      const LinkId l = first + static_cast<LinkId>(i);
      out.push_back(LinkUsage{l, topo.link(l).kind, t.bytes, t.busy_s});
    }
  }
  return out;
}

std::string source_name(const Topology& topology, LinkId l) {
  return vertex_label(topology.vertex(topology.link(l).src));
}

std::string destination_name(const Topology& topology, LinkId l) {
  const Link& link = topology.link(l);
  return link.kind == LinkKind::Dma ? fmt::format("rank {}", l) : vertex_label(topology.vertex(link.dst));
}

NetworkCounters Network::counters() const { return model_->counters(); }

}  // namespace trnsim::net
