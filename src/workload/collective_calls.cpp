#include "collective_calls.hpp"

namespace trnsim::workload {
namespace {

std::size_t idx(std::int64_t v) { return static_cast<std::size_t>(v); }

}  // namespace

CollectiveCalls::CollectiveCalls(const RankLayout& layout, bool symmetric, StepGraph& graph)
    : layout_(layout), symmetric_(symmetric), graph_(graph) {
  calls_.resize(idx(layout.dp() * layout.pp() + layout.tp() * layout.pp() + layout.tp() * layout.dp()));
}

std::size_t CollectiveCalls::group_instance(GroupKind kind, const RankLayout::Coord& c) const {
  const auto tp = layout_.tp(), dp = layout_.dp(), pp = layout_.pp();
  switch (kind) {
    case GroupKind::Tp: return idx(c.dp + dp * c.pp);
    case GroupKind::Dp: return idx(dp * pp + c.tp + tp * c.pp);
    case GroupKind::Tied: break;
  }
  return idx(dp * pp + tp * pp + c.tp + tp * c.dp);
}

GroupSet CollectiveCalls::groups(GroupKind kind, const RankLayout::Coord& c) const {
  GroupSet g;
  auto add = [&g](const std::vector<std::int32_t>& group) {
    g.group_size = static_cast<std::int32_t>(group.size());
    g.ranks.insert(g.ranks.end(), group.begin(), group.end());
  };
  switch (kind) {
    case GroupKind::Tp:
      if (!symmetric_) {
        add(layout_.tp_group(c.dp, c.pp));
        return g;
      }
      for (std::int64_t d = 0; d < layout_.dp(); ++d) add(layout_.tp_group(d, c.pp));
      return g;
    case GroupKind::Dp:
      if (!symmetric_) {
        add(layout_.dp_group(c.tp, c.pp));
        return g;
      }
      for (std::int64_t t = 0; t < layout_.tp(); ++t) add(layout_.dp_group(t, c.pp));
      return g;
    case GroupKind::Tied: break;
  }
  auto pair = [&](std::int64_t t, std::int64_t d) {
    add({layout_.rank(t, d, 0), layout_.rank(t, d, layout_.pp() - 1)});
  };
  if (!symmetric_) {
    pair(c.tp, c.dp);
    return g;
  }
  for (std::int64_t d = 0; d < layout_.dp(); ++d) {
    for (std::int64_t t = 0; t < layout_.tp(); ++t) pair(t, d);
  }
  return g;
}

std::uint32_t CollectiveCalls::collective(GroupKind kind, const RankLayout::Coord& c, CollectiveOp op, double bytes) {
  // Replica sets are per stage (symmetric) or per group instance (full).
  std::int64_t set = 0;
  if (symmetric_) {
    set = kind == GroupKind::Tied ? 0 : c.pp;
  } else {
    set = static_cast<std::int64_t>(group_instance(kind, c));
  }
  const auto key = std::make_tuple(static_cast<int>(kind), set, static_cast<int>(op), bytes);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  // Every op and size on one replica set shares its group set.
  const auto [at, fresh] = sets_.try_emplace({static_cast<int>(kind), set}, static_cast<std::uint32_t>(graph_.group_sets.size()));
  if (fresh) graph_.group_sets.push_back(groups(kind, c));
  const auto id = static_cast<std::uint32_t>(graph_.collectives.size());
  graph_.collectives.push_back(Collective{op, bytes, at->second});
  index_.emplace(key, id);
  return id;
}

std::uint32_t CollectiveCalls::call(GroupKind kind, const RankLayout::Coord& c, std::uint32_t& occurrence) {
  auto& calls = calls_[group_instance(kind, c)];
  if (occurrence == calls.size()) calls.push_back(graph_.calls++);
  return calls[occurrence++];
}

}  // namespace trnsim::workload
