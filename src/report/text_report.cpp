// The terminal summary of one step: what ran, the headline figures, the breakdown, memory, the
// ranked findings with their suggestions, the critical path and the busiest links.
#include <fmt/core.h>

#include "trnsim/report/step_report.hpp"
#include "trnsim/units.hpp"

namespace trnsim::report {
namespace {

using units::kGiB;

}  // namespace

std::string format_text(const StepReport& r, bool wall_times) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  const auto& p = r.plan;
  line(fmt::format("model      {} ({:.2f} B parameters), seq {} x global batch {}", r.model, r.parameters / 1e9,
                   r.seq_len, r.global_batch));
  line(fmt::format("cluster    {} x {} ({} chips, {} ranks), network model {}", r.instances, r.instance, r.chips,
                   r.ranks, r.network));
  line(fmt::format("plan       TP {} PP {} DP {}, micro-batch {} x {}, {}{}, SP {}, ZeRO-{}, recompute {}", p.tp,
                   p.pp, p.dp, p.micro_batch, p.micro_batches, schedule_name(p.schedule),
                   p.virtual_stages > 1 ? fmt::format(" (v={})", p.virtual_stages) : std::string(),
                   p.sequence_parallel ? "on" : "off", p.zero, recompute_name(p.recompute)));
  line("");
  line(fmt::format("step time  {:.4f} s", r.step_time_s));
  line(fmt::format("throughput {:.2f} sequences/s, {:.0f} tokens/s", r.sequences_per_s, r.tokens_per_s));
  line(fmt::format("MFU        {:.1f} %   (model {:.3e} FLOP/step over peak {:.1f} PFLOP/s)", 100 * r.mfu,
                   r.model_flops, r.peak_flops / 1e15));
  line(fmt::format("HFU        {:.1f} %   (executed {:.3e} FLOP/step, recompute included)", 100 * r.hfu,
                   r.hardware_flops));
  line("");
  line(fmt::format("breakdown of the bottleneck rank {} (stage {}); the parts add up to the step time", r.breakdown.rank,
                   r.bottleneck_stage));
  for (int i = 0; i < kPartCount; ++i) {
    const double s = r.breakdown.seconds[static_cast<std::size_t>(i)];
    line(fmt::format("  {:<20} {:>10.4f} s {:>6.1f} %", part_name(static_cast<Part>(i)), s,
                     r.step_time_s > 0 ? 100 * s / r.step_time_s : 0.0));
  }
  line("");
  line("engine busy time of that rank (cost model), seconds per step");
  std::string engines = " ";
  for (int e = 0; e < cost::kEngineCount; ++e) {
    engines += fmt::format(" {} {:.3f}", engine_name(static_cast<cost::Engine>(e)), r.engine_busy[static_cast<std::size_t>(e)]);
  }
  line(engines);
  line("");
  line("memory per rank, GiB");
  line(fmt::format("  {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}", "stage", "weights", "grads", "optim",
                   "activ", "emb/log", "work", "total", "capacity"));
  for (const auto& m : r.memory) {
    const auto& s = m.memory;
    line(fmt::format("  {:>5} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f}{}", s.stage,
                     s.weights / kGiB, s.gradients / kGiB, s.optimizer / kGiB, s.activations / kGiB,
                     s.embedding_logits / kGiB, s.workspace / kGiB, s.total() / kGiB, m.capacity / kGiB,
                     m.fits() ? "" : "  OUT OF MEMORY"));
  }
  line("");
  line("findings, ranked by the step time they cost");
  if (r.findings.empty()) line("  none");
  for (std::size_t i = 0; i < r.findings.size(); ++i) {
    const auto& f = r.findings[i];
    line(fmt::format("  {}. [{}] {}", i + 1, f.rule,
                     f.seconds > 0 ? fmt::format("{:.4g} s ({:.1f} % of the step)", f.seconds,
                                                 r.step_time_s > 0 ? 100 * f.seconds / r.step_time_s : 0.0)
                                   : std::string(f.rule == "out_of_memory" ? "blocks the run" : "")));
    line(fmt::format("     {}", f.message));
    line(fmt::format("     -> {}", f.suggestion));
  }
  const auto& cp = r.critical_path;
  line("");
  line(fmt::format("critical path: {} segments, {:.4f} s (= the step time)", cp.segments.size(), cp.length_s));
  std::string categories = " ";
  for (int i = 0; i < kPathCategoryCount; ++i) {
    const double s = cp.seconds[static_cast<std::size_t>(i)];
    if (s > 0) categories += fmt::format(" {} {:.1f} %", path_category_name(static_cast<PathCategory>(i)),
                                         cp.length_s > 0 ? 100 * s / cp.length_s : 0.0);
  }
  line(categories);
  std::string ranks = "  by stage:";
  for (const auto& rp : cp.by_rank) {
    ranks += fmt::format(" {}: {:.1f} %", rp.stage, cp.length_s > 0 ? 100 * rp.seconds / cp.length_s : 0.0);
  }
  line(ranks);
  for (std::size_t i = 0; i < cp.top.size() && i < 5; ++i) {
    const auto& t = cp.top[i];
    line(fmt::format("  {:<28} {:>10.4f} s {:>6.1f} %  x{}", t.name, t.seconds,
                     cp.length_s > 0 ? 100 * t.seconds / cp.length_s : 0.0, t.count));
  }
  if (!r.links.kinds.empty()) {
    line("");
    line("link utilisation (busy time over the step time)");
    for (const auto& k : r.links.kinds) {
      line(fmt::format("  {:<14} {:>6} links {:>12.4g} GB   mean {:>5.1f} %  max {:>5.1f} %", net::to_string(k.kind),
                       k.links, k.bytes / 1e9, 100 * k.mean_busy_fraction, 100 * k.max_busy_fraction));
    }
    for (std::size_t i = 0; i < r.links.top.size() && i < 3; ++i) {
      const auto& l = r.links.top[i];
      line(fmt::format("  busiest: {} {} -> {} {:.1f} % busy, {:.4g} GB at {:.1f} GB/s", net::to_string(l.kind),
                       l.src, l.dst, 100 * l.busy_fraction, l.bytes / 1e9, l.bandwidth / 1e9));
    }
  }
  if (!r.choices.empty()) {
    line("");
    line("unset fields chosen");
    for (const auto& c : r.choices) line(fmt::format("  {}", c));
  }
  line("");
  if (wall_times) {
    line(fmt::format("simulated {} of {} ranks, {} tasks, {} events; build {:.3f} s, replay {:.3f} s wall",
                     r.simulated_ranks, r.ranks, r.tasks, r.events, r.build_seconds, r.simulate_seconds));
  } else {
    line(fmt::format("simulated {} of {} ranks, {} tasks, {} events", r.simulated_ranks, r.ranks, r.tasks, r.events));
  }
  return out;
}

}  // namespace trnsim::report
