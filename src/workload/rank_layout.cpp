#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::workload {

RankLayout::RankLayout(std::int64_t tp, std::int64_t dp, std::int64_t pp, const std::string& order, std::int64_t ep,
                       std::int64_t cp)
    : tp_(tp), dp_(dp), pp_(pp), ep_(ep), cp_(cp) {
  if (cp < 1 || dp % cp != 0) throw InternalError(fmt::format("RankLayout: cp {} does not divide dp {}", cp, dp));
  if (ep < 1 || (dp / cp) % ep != 0)
    throw InternalError(fmt::format("RankLayout: ep {} does not divide dp / cp {}", ep, dp / cp));
  check_rank_order(order);
  std::stringstream in(full_rank_order(order));
  std::int64_t stride = 1;
  for (std::string dim; std::getline(in, dim, ',');) {
    const std::pair<const char*, std::pair<std::int64_t*, std::int64_t>> axes[] = {
        {"tp", {&stride_tp_, tp_}}, {"cp", {&stride_cp_, cp_}}, {"ep", {&stride_ep_, ep_}},
        {"dp", {&stride_dp_, dp_ / (cp_ * ep_)}}, {"pp", {&stride_pp_, pp_}}};
    for (const auto& [name, axis] : axes) {
      if (dim != name) continue;
      *axis.first = stride;
      stride *= axis.second;
    }
  }
}

// Coordinate d of the layout's DP dimension is cp_i + cp (ep_i + ep dp_o) (plan.hpp).
std::int64_t RankLayout::dp_offset(std::int64_t d) const {
  const std::int64_t c = d % cp_, e = (d / cp_) % ep_, o = d / (cp_ * ep_);
  return c * stride_cp_ + e * stride_ep_ + o * stride_dp_;
}

RankLayout::Coord RankLayout::coord(std::int32_t r) const {
  const std::int64_t v = r;
  const std::int64_t c = (v / stride_cp_) % cp_, e = (v / stride_ep_) % ep_, o = (v / stride_dp_) % (dp_ / (cp_ * ep_));
  return {(v / stride_tp_) % tp_, c + cp_ * (e + ep_ * o), (v / stride_pp_) % pp_};
}

std::vector<std::int32_t> RankLayout::tp_group(std::int64_t d, std::int64_t p) const {
  std::vector<std::int32_t> g;
  g.reserve(static_cast<std::size_t>(tp_));
  append_tp_group(d, p, g);
  return g;
}

std::vector<std::int32_t> RankLayout::dp_group(std::int64_t t, std::int64_t p) const {
  std::vector<std::int32_t> g;
  g.reserve(static_cast<std::size_t>(dp_));
  append_dp_group(t, p, g);
  return g;
}

// A rank is linear in its TP coordinate (and in its DP coordinate where cp and ep are 1): a
// group is its first rank and a stride.
void RankLayout::append_tp_group(std::int64_t d, std::int64_t p, std::vector<std::int32_t>& out) const {
  const std::int64_t first = rank(0, d, p);
  for (std::int64_t t = 0; t < tp_; ++t) out.push_back(static_cast<std::int32_t>(first + t * stride_tp_));
}

void RankLayout::append_dp_group(std::int64_t t, std::int64_t p, std::vector<std::int32_t>& out) const {
  if (cp_ != 1 || ep_ != 1) {
    for (std::int64_t d = 0; d < dp_; ++d) out.push_back(rank(t, d, p));
    return;
  }
  const std::int64_t first = rank(t, 0, p);
  for (std::int64_t d = 0; d < dp_; ++d) out.push_back(static_cast<std::int32_t>(first + d * stride_dp_));
}

// Under CP a coordinate d is replica d / cp at position d mod cp (plan.hpp).
std::vector<std::int32_t> RankLayout::ep_group(std::int64_t t, std::int64_t d, std::int64_t p) const {
  std::vector<std::int32_t> g;
  g.reserve(static_cast<std::size_t>(ep_));
  const std::int64_t replica = d / cp_;
  const std::int64_t first = replica - replica % ep_;
  for (std::int64_t e = 0; e < ep_; ++e) g.push_back(rank(t, (first + e) * cp_ + d % cp_, p));
  return g;
}

std::vector<std::int32_t> RankLayout::expert_dp_group(std::int64_t t, std::int64_t d, std::int64_t p) const {
  std::vector<std::int32_t> g;
  g.reserve(static_cast<std::size_t>(dp_ / ep_));
  const std::int64_t e = (d / cp_) % ep_;
  for (std::int64_t replica = e; replica < dp_ / cp_; replica += ep_) {
    for (std::int64_t c = 0; c < cp_; ++c) g.push_back(rank(t, replica * cp_ + c, p));
  }
  return g;
}

std::vector<std::int32_t> RankLayout::cp_group(std::int64_t t, std::int64_t d, std::int64_t p) const {
  std::vector<std::int32_t> g;
  g.reserve(static_cast<std::size_t>(cp_));
  const std::int64_t first = d - d % cp_;
  for (std::int64_t c = 0; c < cp_; ++c) g.push_back(rank(t, first + c, p));
  return g;
}

namespace {

// Whether the n ranks rank_of(0), ..., rank_of(n - 1) lie in more than one instance: some rank's
// instance is not the first's (no list or set per group: at 65,536 chips the TP groups are 16,384,
// and a list and a set per group were 1 % of the run).
template <class RankOf>
bool in_more_than_one_instance(std::int64_t n, std::int64_t ranks_per_instance, RankOf rank_of) {
  if (n <= 0) return false;
  const std::int64_t first = rank_of(0) / ranks_per_instance;
  for (std::int64_t i = 1; i < n; ++i) {
    if (rank_of(i) / ranks_per_instance != first) return true;
  }
  return false;
}

}  // namespace

std::int64_t ep_groups_spanning_instances(const RankLayout& layout, std::int64_t ranks_per_instance) {
  if (ranks_per_instance <= 0 || layout.ep() == 1) return 0;
  std::int64_t spanning = 0;
  for (std::int64_t d = 0; d < layout.dp(); d += layout.ep() * layout.cp()) {
    const auto g = layout.ep_group(0, d, 0);
    const auto size = static_cast<std::int64_t>(g.size());
    if (in_more_than_one_instance(size, ranks_per_instance, [&](std::int64_t i) { return g[static_cast<std::size_t>(i)]; }))
      ++spanning;
  }
  return spanning;
}

std::vector<std::string> layout_findings(const RankLayout& layout, std::int64_t ranks_per_instance) {
  std::vector<std::string> findings;
  if (ranks_per_instance <= 0 || layout.tp() == 1) return findings;
  std::int64_t spanning = 0;
  for (std::int64_t p = 0; p < layout.pp(); ++p) {
    for (std::int64_t d = 0; d < layout.dp(); ++d) {
      if (in_more_than_one_instance(layout.tp(), ranks_per_instance, [&](std::int64_t t) { return layout.rank(t, d, p); }))
        ++spanning;
    }
  }
  if (spanning > 0) {
    findings.push_back(fmt::format("{} of {} TP groups (tp = {}) span more than one instance ({} ranks per instance): "
                                   "their collectives cross the inter-instance network",
                                   spanning, layout.pp() * layout.dp(), layout.tp(), ranks_per_instance));
  }
  return findings;
}

}  // namespace trnsim::workload
