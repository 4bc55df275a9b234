// The sweep's text table and CSV (explore/sweep_report.hpp).
#include "trnsim/explore/sweep_report.hpp"

#include <algorithm>
#include <map>

#include <fmt/core.h>
#include <fmt/format.h>

#include "trnsim/report/writers/csv_report.hpp"
#include "trnsim/units.hpp"

namespace trnsim::explore {
namespace {

template <typename T>
std::string or_dash(const std::optional<T>& v) {
  if (!v) return "-";
  if constexpr (std::is_same_v<T, bool>) return *v ? "on" : "off";
  else return fmt::format("{}", *v);
}

template <typename T>
std::string or_empty(const std::optional<T>& v) {
  if (!v) return "";
  if constexpr (std::is_same_v<T, bool>) return *v ? "true" : "false";
  else return fmt::format("{}", *v);
}

}  // namespace

std::vector<std::pair<std::string, std::size_t>> rules_by_count(const std::map<std::string, std::size_t>& counts) {
  std::vector<std::pair<std::string, std::size_t>> rules(counts.begin(), counts.end());
  std::stable_sort(rules.begin(), rules.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return rules;
}

std::vector<const PlanOutcome*> ranked(const SweepResult& result) {
  std::vector<const PlanOutcome*> out;
  for (const PlanOutcome& o : result.outcomes)
    if (o.status == PlanStatus::Simulated) out.push_back(&o);
  std::sort(out.begin(), out.end(), [](const PlanOutcome* a, const PlanOutcome* b) {
    return a->step_time_s != b->step_time_s ? a->step_time_s < b->step_time_s : a->index < b->index;
  });
  return out;
}

std::string format_sweep(const SweepResult& result, std::size_t top) {
  const SweepSummary& s = result.summary;
  std::size_t simulated = 0, oom = 0, pruned = 0;
  std::map<std::string, std::size_t> invalid;
  for (const PlanOutcome& o : result.outcomes) {
    if (o.status == PlanStatus::Simulated) ++simulated;
    if (o.status == PlanStatus::OutOfMemory) ++oom;
    if (o.status == PlanStatus::Pruned) ++pruned;
    if (o.status == PlanStatus::Invalid) ++invalid[o.reason];
  }
  std::size_t invalid_count = 0;
  for (const auto& [reason, n] : invalid) invalid_count += n;

  std::string out = fmt::format("sweep: {}\n", s.title);
  if (s.shards > 1) out += fmt::format("shard {}/{}: {} of the {} points\n", s.shard, s.shards, result.outcomes.size(), s.points);
  if (s.search)
    out += fmt::format("search: {} plans; {} invalid, {} out of memory, {} pruned by their compute lower bound, {} "
                       "simulated\n",
                       result.outcomes.size(), invalid_count, oom, pruned, simulated);
  else
    out += fmt::format("plans: {} enumerated; {} invalid, {} out of memory, {} simulated\n", result.outcomes.size(),
                       invalid_count, oom, simulated);
  if (!invalid.empty()) {
    out += "invalid, by rule:\n";
    for (const auto& [reason, n] : rules_by_count(invalid)) out += fmt::format("  {:>6}  {}\n", n, reason);
  }
  const std::vector<const PlanOutcome*> best = ranked(result);
  if (best.empty()) return out + "no plan ran: nothing to rank\n";
  // A search ranks exactly only its own --top K: the plans it pruned could sit below the K-th.
  const std::size_t exact = s.search ? s.keep : best.size();
  const std::size_t shown = std::min({top, best.size(), exact});
  out += fmt::format("\nfastest {} of {} (breakdown of the bottleneck rank, seconds){}:\n", shown, best.size(),
                     top > exact && s.search ? fmt::format("; the search ranked exactly its --top {} only", exact) : "");
  std::string head = fmt::format("{:>4}", "#");
  for (const std::string& path : s.vary_paths) head += fmt::format("  {}", path);
  head += fmt::format(" {:>4} {:>4} {:>5} {:>3} {:>2} {:>9} {:>4} {:>3} {:>10} {:>10} {:>6} {:>7}", "tp", "pp", "dp",
                      "mb", "v", "recompute", "zero", "sp", "step_s", "tokens/s", "MFU", "mem_GiB");
  for (const char* part : kPartHeads) head += fmt::format(" {:>8}", part);
  out += head + "\n";
  for (std::size_t k = 0; k < shown; ++k) {
    const PlanOutcome& o = *best[k];
    std::string row = fmt::format("{:>4}", k + 1);
    for (std::size_t v = 0; v < o.vary.size(); ++v)
      row += fmt::format("  {:>{}}", o.vary[v], s.vary_paths[v].size());
    row += fmt::format(" {:>4} {:>4} {:>5} {:>3} {:>2} {:>9} {:>4} {:>3} {:>10.4f} {:>10.4g} {:>5.1f}% {:>7.2f}",
                       or_dash(o.tp), or_dash(o.pp), or_dash(o.dp), or_dash(o.micro_batch), or_dash(o.virtual_stages),
                       or_dash(o.recompute), or_dash(o.zero), or_dash(o.sequence_parallel), o.step_time_s,
                       o.tokens_per_s, 100 * o.mfu, o.peak_memory_bytes / units::kGiB);
    for (double part : o.breakdown) row += fmt::format(" {:>8.3f}", part);
    out += row + "\n";
    out += fmt::format("{:>4}  {}\n", "", o.finding_rule.empty() ? "no finding" : o.finding_rule + ": " + o.finding);
  }
  return out;
}

std::string sweep_csv(const SweepResult& result) {
  std::string out = "index";
  // Appends one field with its separator (GCC 12 warns falsely on `"," + std::string` chains).
  const auto field = [&out](std::string_view text) {
    out += ',';
    out += text;
  };
  for (const std::string& path : result.summary.vary_paths) field(report::csv_field(path));
  field("tp,pp,dp,micro_batch,virtual_stages,schedule,recompute,zero,sequence_parallel,status,reason,step_time_s,"
        "tokens_per_s,mfu,peak_memory_GiB,lower_bound_s");
  for (int p = 0; p < report::kPartCount; ++p) field(fmt::format("{}_s", report::part_name(static_cast<report::Part>(p))));
  field("top_finding");
  out += '\n';
  const auto number = [](double v) { return fmt::format("{:.6g}", v); };
  for (const PlanOutcome& o : result.outcomes) {
    out += fmt::format("{}", o.index);
    for (const std::string& v : o.vary) field(report::csv_field(v));
    for (const std::string& v : {or_empty(o.tp), or_empty(o.pp), or_empty(o.dp), or_empty(o.micro_batch),
                                 or_empty(o.virtual_stages), or_empty(o.schedule), or_empty(o.recompute),
                                 or_empty(o.zero), or_empty(o.sequence_parallel)})
      field(v);
    field(status_name(o.status));
    field(report::csv_field(o.status == PlanStatus::Invalid ? o.reason : o.detail));
    const bool ran = o.status == PlanStatus::Simulated;
    for (double v : {o.step_time_s, o.tokens_per_s, o.mfu}) field(ran ? number(v) : "");
    field(o.status == PlanStatus::Invalid ? "" : fmt::format("{:.3f}", o.peak_memory_bytes / units::kGiB));
    field(o.lower_bound_s > 0 ? number(o.lower_bound_s) : "");
    for (double part : o.breakdown) field(ran ? number(part) : "");
    field(report::csv_field(o.finding_rule));
    out += '\n';
  }
  return out;
}

}  // namespace trnsim::explore
