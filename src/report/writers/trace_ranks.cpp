// Which ranks a Chrome trace shows: the --trace-ranks list and its mapping to simulated ranks.
#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/core.h>

#include "trnsim/error.hpp"
#include "trnsim/report/writers/chrome_trace.hpp"
#include "trnsim/workload/plan.hpp"

namespace trnsim::report {
namespace {

constexpr std::string_view kExpected = "a comma-separated list of ranks and ranges like 0-7,128";

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad_syntax(std::string_view found) {
  throw InputError(fmt::format("--trace-ranks: expected {}, found \"{}\"", kExpected, found));
}

// A non-negative decimal integer, the whole of `s`.
std::int64_t parse_rank(std::string_view s, std::string_view item) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || s.front() == '-' || s.front() == '+' || end != s.data() + s.size()) bad_syntax(item);
  if (ec == std::errc::result_out_of_range) v = std::numeric_limits<std::int64_t>::max();
  return v;
}

}  // namespace

std::vector<std::int32_t> parse_rank_list(std::string_view text, std::int32_t total_ranks) {
  if (trim(text).empty()) bad_syntax(text);
  std::vector<bool> listed(static_cast<std::size_t>(std::max(total_ranks, 0)), false);
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) bad_syntax(text);
    const std::size_t dash = item.find('-', 1);  // a leading '-' is a sign, rejected by parse_rank
    const std::int64_t first = parse_rank(trim(item.substr(0, dash)), item);
    const std::int64_t last = dash == std::string_view::npos ? first : parse_rank(trim(item.substr(dash + 1)), item);
    if (last < first) {
      throw InputError(fmt::format("--trace-ranks: expected a range FIRST-LAST with FIRST <= LAST, found \"{}\"", item));
    }
    if (last >= total_ranks) {
      throw InputError(fmt::format("--trace-ranks: expected ranks in [0, {}) (the cluster's ranks), found \"{}\"",
                                   total_ranks, item));
    }
    for (std::int64_t r = first; r <= last; ++r) listed[static_cast<std::size_t>(r)] = true;
  }
  std::vector<std::int32_t> ranks;
  for (std::size_t r = 0; r < listed.size(); ++r) {
    if (listed[r]) ranks.push_back(static_cast<std::int32_t>(r));
  }
  return ranks;
}

std::vector<std::int32_t> traced_ranks(const replay::StepRun& run, const std::vector<std::int32_t>& requested) {
  const workload::Plan& plan = run.plan;
  const workload::RankLayout layout(plan.tp, plan.grad_dp(), plan.pp, plan.rank_order, plan.ep, plan.cp);
  // A stage's representative: the rank build_step simulates for it under symmetry (TP 0, DP 0).
  const auto representative = [&](std::int64_t stage) {
    const std::int32_t r = layout.rank(0, 0, stage);
    if (!run.graph.simulates(r)) throw InternalError(fmt::format("chrome trace: stage {} has no simulated rank", stage));
    return r;
  };
  std::vector<std::int32_t> out;
  if (requested.empty()) {
    for (std::int64_t p = 0; p < plan.pp; ++p) out.push_back(representative(p));
  } else {
    for (const std::int32_t r : requested) {
      if (r < 0 || r >= layout.size()) {
        throw InputError(fmt::format("--trace-ranks: expected ranks in [0, {}), found {}", layout.size(), r));
      }
      out.push_back(run.graph.simulates(r) ? r : representative(layout.coord(r).pp));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace trnsim::report
