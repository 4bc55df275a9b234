// The terminal summary of one step (contract in text_report.hpp): one function per section, each
// returning its lines ("\n"-terminated), strung together by format_text with a blank line between.
#include "trnsim/report/writers/text_report.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "trnsim/units.hpp"
#include "calibration_bar.hpp"
#include "plan_text.hpp"

namespace trnsim::report {
namespace {

using units::kGiB;

// `head`, then the items separated by spaces (just `head` when there are none).
std::string spaced(std::string_view head, const std::vector<std::string>& items) {
  return items.empty() ? std::string(head) : fmt::format("{} {}", head, fmt::join(items, " "));
}

double share_of(double part, double whole) { return whole > 0 ? 100 * part / whole : 0.0; }

// A replayed trace: where it came from and how many of its compute nodes kept a measured time.
std::string trace_line(const replay::StepRun::TraceOrigin& t) {
  if (t.file.empty()) return "";
  std::string out = fmt::format("trace      {} ({}{}): {} nodes, {} kept a measured time", t.file, t.format,
                                t.cluster_instance.empty() ? "" : ", recorded on " + t.cluster_instance, t.nodes,
                                t.measured_tasks);
  if (t.duration_scale != 1) out += fmt::format(" (scaled x {})", t.duration_scale);
  if (!t.ignored.empty()) out += fmt::format(", {} ignored", t.ignored.size());
  return out + "\n";
}

std::string run_section(const StepReport& r) {
  return fmt::format("model      {} ({:.2f} B parameters), seq {} x global batch {}\n", r.model, r.parameters / 1e9,
                     r.seq_len, r.global_batch) +
         fmt::format("cluster    {} x {} ({} chips, {} ranks), network model {}\n", r.instances, r.instance, r.chips,
                     r.ranks, r.network) +
         (r.model_flops == 0 && !r.trace.file.empty()
              ? fmt::format("plan       none stated: the trace's {} ranks in {} stage(s)\n", r.plan.ranks(), r.plan.pp)
              : fmt::format("plan       {}\n", plan_text(r.plan))) +
         trace_line(r.trace);
}

std::string figures_section(const StepReport& r) {
  return fmt::format("step time  {:.4f} s\n", r.step_time_s) +
         (r.calibration ? calibration_line(*r.calibration) : std::string()) +
         fmt::format("throughput {:.2f} sequences/s, {:.0f} tokens/s\n", r.sequences_per_s, r.tokens_per_s) +
         fmt::format("MFU        {:.1f} %   (model {:.3e} FLOP/step over peak {:.1f} PFLOP/s)\n", 100 * r.mfu,
                     r.model_flops, r.peak_flops / 1e15) +
         fmt::format("HFU        {:.1f} %   (executed {:.3e} FLOP/step, recompute included)\n", 100 * r.hfu,
                     r.hardware_flops);
}

std::string breakdown_lines(const StepReport& r) {
  std::string out = fmt::format("breakdown of the bottleneck rank {} (stage {}); the parts add up to the step time\n",
                                r.breakdown.rank, r.bottleneck_stage);
  for (int i = 0; i < kPartCount; ++i) {
    const double s = r.breakdown.seconds[static_cast<std::size_t>(i)];
    out += fmt::format("  {:<20} {:>10.4f} s {:>6.1f} %\n", part_name(static_cast<Part>(i)), s,
                       share_of(s, r.step_time_s));
  }
  return out;
}

std::string engines_section(const StepReport& r) {
  std::vector<std::string> engines;
  for (int e = 0; e < cost::kEngineCount; ++e) {
    engines.push_back(fmt::format("{} {:.3f}", engine_name(static_cast<cost::Engine>(e)),
                                  r.engine_busy[static_cast<std::size_t>(e)]));
  }
  return fmt::format("engine busy time of that rank (cost model), seconds per step\n{}\n", spaced(" ", engines));
}

std::string memory_section(const StepReport& r) {
  std::string out = "memory per rank, GiB\n";
  out += fmt::format("  {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "stage", "weights", "grads", "optim",
                     "activ", "emb/log", "work", "total", "capacity");
  for (const auto& m : r.memory) {
    const auto& s = m.memory;
    out += fmt::format("  {:>5} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f}{}\n", s.stage,
                       s.weights / kGiB, s.gradients / kGiB, s.optimizer / kGiB, s.activations / kGiB,
                       s.embedding_logits / kGiB, s.workspace / kGiB, s.total() / kGiB, m.capacity / kGiB,
                       m.fits() ? "" : "  OUT OF MEMORY");
  }
  return out;
}

std::string findings_lines(const StepReport& r) {
  std::string out = "findings, ranked by the step time they cost\n";
  if (r.findings.empty()) out += "  none\n";
  for (std::size_t i = 0; i < r.findings.size(); ++i) {
    const auto& f = r.findings[i];
    const std::string cost =
        f.seconds > 0 ? fmt::format("{:.4g} s ({:.1f} % of the step)", f.seconds, share_of(f.seconds, r.step_time_s))
                      : std::string(f.rule == "out_of_memory" ? "blocks the run" : "");
    out += fmt::format("  {}. [{}] {}\n", i + 1, f.rule, cost);
    out += fmt::format("     {}\n", f.message);
    out += fmt::format("     -> {}\n", f.suggestion);
  }
  return out;
}

std::string critical_path_section(const CriticalPath& cp) {
  std::string out = fmt::format("critical path: {} segments, {:.4f} s (= the step time)\n", cp.segment_count,
                                cp.length_s);
  std::vector<std::string> categories;
  for (int i = 0; i < kPathCategoryCount; ++i) {
    const double s = cp.seconds[static_cast<std::size_t>(i)];
    if (s > 0) {
      categories.push_back(
          fmt::format("{} {:.1f} %", path_category_name(static_cast<PathCategory>(i)), share_of(s, cp.length_s)));
    }
  }
  out += spaced(" ", categories) + "\n";
  std::vector<std::string> stages;
  for (const auto& rp : cp.by_rank) stages.push_back(fmt::format("{}: {:.1f} %", rp.stage, share_of(rp.seconds, cp.length_s)));
  out += spaced("  by stage:", stages) + "\n";
  for (std::size_t i = 0; i < cp.top.size() && i < 5; ++i) {
    const auto& t = cp.top[i];
    out += fmt::format("  {:<28} {:>10.4f} s {:>6.1f} %  x{}\n", t.name, t.seconds, share_of(t.seconds, cp.length_s),
                       t.count);
  }
  return out;
}

std::string links_section(const LinkUtilisation& links) {
  std::string out = "link utilisation (busy time over the step time)\n";
  for (const auto& k : links.kinds) {
    out += fmt::format("  {:<14} {:>6} links {:>12.4g} GB   mean {:>5.1f} %  max {:>5.1f} %\n", trnsim::to_string(k.kind),
                       k.links, k.bytes / 1e9, 100 * k.mean_busy_fraction, 100 * k.max_busy_fraction);
  }
  for (std::size_t i = 0; i < links.top.size() && i < 3; ++i) {
    const auto& l = links.top[i];
    out += fmt::format("  busiest: {} {} -> {} {:.1f} % busy, {:.4g} GB at {:.1f} GB/s\n", trnsim::to_string(l.kind), l.src,
                       l.dst, 100 * l.busy_fraction, l.bytes / 1e9, l.bandwidth / 1e9);
  }
  return out;
}

std::string choices_section(const std::vector<std::string>& choices) {
  std::string out = "unset fields chosen\n";
  for (const auto& c : choices) out += fmt::format("  {}\n", c);
  return out;
}

std::string footer(const StepReport& r, bool wall_times) {
  // Fast-forwarded: tasks and events are the real step's, extrapolated; the wall times the two reduced runs'.
  const std::string how = r.fast_forward ? " (fast-forwarded over the steady state)" : "";
  if (!wall_times)
    return fmt::format("simulated {} of {} ranks, {} tasks, {} events{}\n", r.simulated_ranks, r.ranks, r.tasks,
                       r.events, how);
  return fmt::format("simulated {} of {} ranks, {} tasks, {} events{}; build {:.3f} s, replay {:.3f} s wall\n",
                     r.simulated_ranks, r.ranks, r.tasks, r.events, how, r.build_seconds, r.simulate_seconds);
}

}  // namespace

std::string format_text(const StepReport& r, bool wall_times) {
  std::vector<std::string> sections{run_section(r),      figures_section(r),  breakdown_lines(r),
                                    engines_section(r),  memory_section(r),   findings_lines(r),
                                    critical_path_section(r.critical_path)};
  if (!r.links.kinds.empty()) sections.push_back(links_section(r.links));
  if (!r.choices.empty()) sections.push_back(choices_section(r.choices));
  sections.push_back(footer(r, wall_times));
  return fmt::format("{}", fmt::join(sections, "\n"));  // a blank line between sections
}

}  // namespace trnsim::report
