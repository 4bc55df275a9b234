#include "collective_calls.hpp"
#include "narrow.hpp"

namespace trnsim::workload {
namespace {

using narrow::idx;

}  // namespace

CollectiveCalls::CollectiveCalls(const RankLayout& layout, bool symmetric, StepGraph& graph)
    : layout_(layout), symmetric_(symmetric), graph_(graph) {
  // Group instances of each kind, one range after the other (group_instance): TP groups dp x pp,
  // DP groups tp x pp, tied pairs tp x dp, EP groups tp x (dp / ep) x pp, expert-DP groups
  // tp x ep x pp; the last two only when ep > 1 (at ep = 1 the builder makes no such call); then
  // CP groups tp x (dp / cp) x pp and ring pairs tp x dp x pp, only when cp > 1. (dp: the layout's
  // cp x dp coordinates; EP counts replicas, dp / cp.)
  const auto tp = layout.tp(), dp = layout.dp(), pp = layout.pp(), ep = layout.ep(), cp = layout.cp();
  const auto replicas = dp / cp;
  calls_.resize(idx(dp * pp + tp * pp + tp * dp + (ep > 1 ? tp * (replicas / ep) * cp * pp + tp * ep * pp : 0) +
                    (cp > 1 ? tp * replicas * pp + tp * dp * pp : 0)));
}

std::size_t CollectiveCalls::group_instance(GroupKind kind, const RankLayout::Coord& c) const {
  const auto tp = layout_.tp(), dp = layout_.dp(), pp = layout_.pp(), ep = layout_.ep(), cp = layout_.cp();
  const auto replicas = dp / cp;
  const auto ep_base = dp * pp + tp * pp + tp * dp;
  // An EP group: its replicas' block (replica / ep) and its CP position; expert-DP: ep_i.
  const auto ep_groups = tp * (replicas / ep) * cp * pp;
  const auto cp_base = ep_base + (ep > 1 ? ep_groups + tp * ep * pp : 0);
  switch (kind) {
    case GroupKind::Tp: return idx(c.dp + dp * c.pp);
    case GroupKind::Dp: return idx(dp * pp + c.tp + tp * c.pp);
    case GroupKind::Tied: break;
    case GroupKind::Ep:
      return idx(ep_base + c.tp + tp * (c.dp % cp + cp * (c.dp / cp / ep + (replicas / ep) * c.pp)));
    case GroupKind::ExpertDp: return idx(ep_base + ep_groups + c.tp + tp * ((c.dp / cp) % ep + ep * c.pp));
    case GroupKind::Cp: return idx(cp_base + c.tp + tp * (c.dp / cp + replicas * c.pp));
    case GroupKind::CpRing: return idx(cp_base + tp * replicas * pp + c.tp + tp * (c.dp + dp * c.pp));
  }
  return idx(dp * pp + tp * pp + c.tp + tp * c.dp);
}

GroupSet CollectiveCalls::groups(GroupKind kind, const RankLayout::Coord& c) const {
  GroupSet g;
  // Every rank once (twice in a set of pairs) in a symmetric set: reserved, not grown by doubling.
  const bool pairs = kind == GroupKind::Tied || kind == GroupKind::CpRing;
  g.ranks.reserve(static_cast<std::size_t>(symmetric_ ? layout_.tp() * layout_.dp() * (pairs ? 2 : 1) : 0));
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
      g.group_size = static_cast<std::int32_t>(layout_.tp());
      for (std::int64_t d = 0; d < layout_.dp(); ++d) layout_.append_tp_group(d, c.pp, g.ranks);
      return g;
    case GroupKind::Dp:
      if (!symmetric_) {
        add(layout_.dp_group(c.tp, c.pp));
        return g;
      }
      g.group_size = static_cast<std::int32_t>(layout_.dp());
      for (std::int64_t t = 0; t < layout_.tp(); ++t) layout_.append_dp_group(t, c.pp, g.ranks);
      return g;
    case GroupKind::Ep:
      if (!symmetric_) {
        add(layout_.ep_group(c.tp, c.dp, c.pp));
        return g;
      }
      for (std::int64_t t = 0; t < layout_.tp(); ++t) {
        for (std::int64_t r = 0; r < layout_.dp() / layout_.cp(); r += layout_.ep()) {
          for (std::int64_t x = 0; x < layout_.cp(); ++x) add(layout_.ep_group(t, r * layout_.cp() + x, c.pp));
        }
      }
      return g;
    case GroupKind::ExpertDp:
      if (!symmetric_) {
        add(layout_.expert_dp_group(c.tp, c.dp, c.pp));
        return g;
      }
      for (std::int64_t t = 0; t < layout_.tp(); ++t) {
        for (std::int64_t e = 0; e < layout_.ep(); ++e) add(layout_.expert_dp_group(t, e * layout_.cp(), c.pp));
      }
      return g;
    case GroupKind::Cp:
      if (!symmetric_) {
        add(layout_.cp_group(c.tp, c.dp, c.pp));
        return g;
      }
      for (std::int64_t d = 0; d < layout_.dp(); d += layout_.cp()) {
        for (std::int64_t t = 0; t < layout_.tp(); ++t) add(layout_.cp_group(t, d, c.pp));
      }
      return g;
    case GroupKind::CpRing:
      // Every rank sends to its neighbour at once: one pair per rank, the simulated rank's first.
      if (!symmetric_) {
        add({layout_.rank(c.tp, c.dp, c.pp), layout_.rank(c.tp, layout_.cp_next(c.dp), c.pp)});
        return g;
      }
      for (std::int64_t d = 0; d < layout_.dp(); ++d) {
        for (std::int64_t t = 0; t < layout_.tp(); ++t) {
          add({layout_.rank(t, d, c.pp), layout_.rank(t, layout_.cp_next(d), c.pp)});
        }
      }
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

}  // namespace trnsim::workload
