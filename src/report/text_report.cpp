// The terminal summary of one step: what ran, the headline figures, the breakdown, memory, findings.
#include <fmt/core.h>

#include "trnsim/report/step_report.hpp"

namespace trnsim::report {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string_view schedule_name(workload::PipelineSchedule s) {
  switch (s) {
    case workload::PipelineSchedule::GPipe: return "gpipe";
    case workload::PipelineSchedule::OneFOneB: return "1f1b";
    case workload::PipelineSchedule::Interleaved: return "1f1b-interleaved";
  }
  return "?";
}

std::string_view recompute_name(workload::Recompute r) {
  switch (r) {
    case workload::Recompute::None: return "none";
    case workload::Recompute::Selective: return "selective";
    case workload::Recompute::Full: return "full";
  }
  return "?";
}

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
  if (!r.findings.empty()) {
    line("");
    line("findings");
    for (const auto& f : r.findings) line(fmt::format("  [{}] {}", f.rule, f.message));
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
