#include "trnsim/net/collective.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "algorithms/algorithms.hpp"
#include "trnsim/error.hpp"

namespace trnsim::net {

namespace {
bool power_of_two(std::size_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The group's ranks split by instance (instances in order), each in ring order; empty when the
// instances do not all hold the same number of the group's ranks.
std::vector<std::vector<int>> by_instance(const std::vector<int>& ordered, const hw::DeviceMap& dm) {
  std::vector<std::vector<int>> groups;
  int current = -1;
  for (int r : ordered) {
    const int inst = dm.instance_of(r);
    if (inst != current) {
      groups.emplace_back();
      current = inst;
    }
    groups.back().push_back(r);
  }
  for (const auto& g : groups) {
    if (g.size() != groups.front().size()) return {};
  }
  return groups;
}

// How many instances hold the group's ranks when each holds as many (by_instance's groups, when
// it finds them), else 0. Counts instances instead of ordering the ring and splitting it: choose()
// asks this of every group of a replica set, thousands of ranks each at 65,536 chips.
std::size_t equal_instances(const std::vector<int>& ranks, const hw::DeviceMap& dm) {
  std::vector<int> instances;
  instances.reserve(ranks.size());
  for (const int r : ranks) instances.push_back(dm.instance_of(r));
  if (!std::is_sorted(instances.begin(), instances.end())) std::sort(instances.begin(), instances.end());
  std::size_t groups = 0, first_size = 0;
  for (std::size_t i = 0; i < instances.size();) {
    std::size_t j = i + 1;
    while (j < instances.size() && instances[j] == instances[i]) ++j;
    if (groups++ == 0) first_size = j - i;
    if (j - i != first_size) return 0;
    i = j;
  }
  return groups;
}

// Torus rows (ranks of the chips of one row, in x order then core) and columns (same x and core,
// in y order); empty unless the group is every rank of exactly one torus instance.
bool torus_grid(const std::vector<int>& ranks, const hw::ClusterSpec& cl, const hw::DeviceMap& dm,
                std::vector<std::vector<int>>* rows, std::vector<std::vector<int>>* cols) {
  const auto& inst = cl.instance;
  if (inst.topology != hw::IntraTopology::Torus2D || inst.torus_x < 2 || inst.torus_y < 2) return false;
  if (static_cast<int>(ranks.size()) != dm.ranks_per_instance()) return false;
  const int i0 = dm.instance_of(ranks.front());
  for (int r : ranks) {
    if (dm.instance_of(r) != i0) return false;
  }
  if (rows == nullptr) return true;
  const int base = i0 * dm.ranks_per_instance(), per_chip = dm.ranks_per_chip();
  rows->assign(static_cast<std::size_t>(inst.torus_y), {});
  cols->assign(static_cast<std::size_t>(inst.torus_x * per_chip), {});
  for (int y = 0; y < inst.torus_y; ++y) {
    for (int x = 0; x < inst.torus_x; ++x) {
      for (int k = 0; k < per_chip; ++k) {
        const int r = base + (y * inst.torus_x + x) * per_chip + k;
        (*rows)[static_cast<std::size_t>(y)].push_back(r);
        (*cols)[static_cast<std::size_t>(x * per_chip + k)].push_back(r);
      }
    }
  }
  return true;
}

void validate(const Collective& c, const hw::DeviceMap& dm) {
  if (c.ranks.empty()) throw InputError(fmt::format("{}: the group has no ranks", to_string(c.op)));
  if (!(c.bytes >= 0)) throw InputError(fmt::format("{}: size must be >= 0 bytes, found {}", to_string(c.op), c.bytes));
  std::vector<int> sorted = c.ranks;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    dm.locate(sorted[i]);  // range check
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      throw InputError(fmt::format("{}: rank {} appears twice in the group", to_string(c.op), sorted[i]));
    }
  }
  if (c.op == CollectiveOp::SendRecv && c.ranks.size() != 2) {
    throw InputError(fmt::format("send-recv needs exactly 2 ranks (from, to), found {}", c.ranks.size()));
  }
}
}  // namespace

CollectiveOp parse_op(std::string_view s) {
  if (const auto op = parse_enum<CollectiveOp>(s)) return *op;
  throw InputError(fmt::format("unknown collective '{}': expected one of {}", s, fmt::join(enum_names<CollectiveOp>(), ", ")));
}

Algorithm parse_algorithm(std::string_view s) {
  if (s == "bi-ring") return Algorithm::BidirectionalRing;  // nccom-test's short name
  if (const auto a = parse_enum<Algorithm>(s)) return *a;
  throw InputError(
      fmt::format("unknown collective algorithm '{}': expected one of {}", s, fmt::join(enum_names<Algorithm>(), ", ")));
}

double bus_bandwidth_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::AllReduce: return 2 * (n - 1) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll: return (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::SendRecv: return 1;
  }
  return 1;
}

int Schedule::steps() const {
  int n = 0;
  for (const auto& p : phases) n += p.repeats;
  return n;
}

double Schedule::bytes_sent() const {
  double b = 0;
  for (const auto& p : phases) {
    double step = 0;
    for (const auto& t : p.transfers) step += t.bytes;
    b += step * p.repeats;
  }
  return b;
}

std::vector<int> ring_order(std::vector<int> ranks, const hw::ClusterSpec& cluster, const hw::DeviceMap& dm) {
  const auto& inst = cluster.instance;
  const bool torus = inst.topology == hw::IntraTopology::Torus2D && inst.torus_x > 0;
  auto key = [&](int r) {
    const auto loc = dm.locate(r);
    int pos = loc.chip_in_instance;
    if (torus) {
      const int x = pos % inst.torus_x, y = pos / inst.torus_x;
      pos = y * inst.torus_x + (y % 2 == 0 ? x : inst.torus_x - 1 - x);
    }
    return std::tuple(loc.instance, pos, loc.core_in_chip, r);
  };
  // Each rank's key once (a sort would locate both sides of every comparison); keys are distinct
  // per rank, so the order is the same.
  std::vector<std::tuple<int, int, int, int>> keyed;
  keyed.reserve(ranks.size());
  for (int r : ranks) keyed.push_back(key(r));
  std::sort(keyed.begin(), keyed.end());
  for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = std::get<3>(keyed[i]);
  return ranks;
}

bool supports(Algorithm a, const Collective& c, const hw::ClusterSpec& cluster, const hw::DeviceMap& dm,
              std::string_view* why) {
  auto no = [&](std::string_view reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  const bool reduce_or_gather = c.op == CollectiveOp::AllReduce || c.op == CollectiveOp::ReduceScatter ||
                                c.op == CollectiveOp::AllGather;
  if (c.op == CollectiveOp::SendRecv && a != Algorithm::Direct) return no("send-recv is point-to-point (direct)");
  if (c.op == CollectiveOp::AllToAll && a != Algorithm::Direct) return no("all-to-all runs only as direct");
  switch (a) {
    case Algorithm::Auto: return no("auto is not a concrete algorithm");
    case Algorithm::Optimal: return no("optimal is not a concrete algorithm");
    case Algorithm::Ring:
    case Algorithm::Direct: return true;
    case Algorithm::BidirectionalRing:
      return reduce_or_gather ? true : no("the bidirectional ring runs all-reduce, reduce-scatter and all-gather");
    case Algorithm::Hierarchical:
    case Algorithm::HierarchicalMesh: {
      if (!reduce_or_gather) return no("hierarchical runs all-reduce, reduce-scatter and all-gather");
      const std::size_t instances = equal_instances(c.ranks, dm);
      if (instances < 2) {
        return no(instances == 0 ? "hierarchical needs the same number of ranks in every instance"
                                  : "hierarchical needs ranks in more than one instance");
      }
      return true;
    }
    case Algorithm::Torus2D:
      if (c.op != CollectiveOp::AllReduce) return no("torus-2d runs all-reduce");
      return torus_grid(c.ranks, cluster, dm, nullptr, nullptr)
                 ? true
                 : no("torus-2d needs every rank of one instance wired as a 2D torus of at least 2x2");
    case Algorithm::HalvingDoubling:
      if (c.op == CollectiveOp::Broadcast) return true;
      if (!reduce_or_gather) return no("halving-doubling runs all-reduce, reduce-scatter, all-gather and broadcast");
      return power_of_two(c.ranks.size()) ? true : no("halving-doubling needs a power-of-two number of ranks");
  }
  return no("unknown algorithm");
}

Schedule make_schedule(const Collective& c, Algorithm a, const hw::ClusterSpec& cluster, const hw::DeviceMap& dm) {
  validate(c, dm);
  std::string_view why;
  if (!supports(a, c, cluster, dm, &why)) {
    throw InputError(fmt::format("{} cannot run {} on {} ranks: {}", to_string(a), to_string(c.op), c.ranks.size(), why));
  }
  if (c.ranks.size() == 1) {
    Schedule s;
    s.algorithm = a;
    return s;
  }
  switch (a) {
    case Algorithm::Ring: return algo::ring(c, ring_order(c.ranks, cluster, dm), false);
    case Algorithm::BidirectionalRing: return algo::ring(c, ring_order(c.ranks, cluster, dm), true);
    case Algorithm::Hierarchical:
    case Algorithm::HierarchicalMesh:
      return algo::hierarchical(c, by_instance(ring_order(c.ranks, cluster, dm), dm), a == Algorithm::HierarchicalMesh);
    case Algorithm::Torus2D: {
      std::vector<std::vector<int>> rows, cols;
      torus_grid(c.ranks, cluster, dm, &rows, &cols);
      return algo::torus_2d(c, rows, cols);
    }
    case Algorithm::HalvingDoubling: return algo::halving_doubling(c, ring_order(c.ranks, cluster, dm));
    case Algorithm::Direct: return algo::direct(c);
    case Algorithm::Auto:
    case Algorithm::Optimal: break;
  }
  throw InternalError("make_schedule: auto and optimal must be resolved first");
}

}  // namespace trnsim::net
