// The band of predictions the unpublished fields allow (contract and candidates in plan_band.hpp).
#include "trnsim/replay/plan_band.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "trnsim/replay/fast_forward.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/workload/memory.hpp"

namespace trnsim::replay {
namespace {

using workload::ParallelismSpec;
using workload::PipelineSchedule;
using workload::Recompute;
using workload::TrainingSpec;

// Powers of two up to 16 sequences, the old plan search's values: beyond 16 a micro-batch rarely
// fits, and a pipeline needs micro-batches to fill its bubble.
constexpr std::array<std::int64_t, 5> kMicroBatches = {1, 2, 4, 8, 16};
constexpr std::array<Recompute, 3> kRecompute = {Recompute::None, Recompute::Selective, Recompute::Full};

// How far the cap lets the enumeration go.
struct Limits {
  std::int64_t v_max;   // largest virtual_stages beyond each micro_batch's smallest
  std::int64_t mb_max;  // largest micro_batch (values above it are dropped, the smallest stays)
};

// Adds the prediction's value of a null field to that field's candidates (after the others):
// the band always holds the plan the prediction ran, a software default such as selective-op or
// zero 3 included.
template <class T>
void include(std::vector<T>& values, const std::optional<T>& own) {
  if (own && std::find(values.begin(), values.end(), *own) == values.end()) values.push_back(*own);
}

std::vector<std::int64_t> micro_batch_values(const TrainingSpec& training, const ParallelismSpec& p,
                                             std::int64_t mb_max, std::optional<std::int64_t> own) {
  if (training.micro_batch) return {*training.micro_batch};
  std::vector<std::int64_t> out;
  const std::int64_t per_replica = p.dp > 0 && training.global_batch % p.dp == 0 ? training.global_batch / p.dp : 0;
  for (const std::int64_t b : kMicroBatches) {
    if (per_replica > 0 && per_replica % b == 0 && (b <= mb_max || out.empty())) out.push_back(b);
  }
  if (own && *own <= mb_max) include(out, own);
  std::sort(out.begin(), out.end());
  // A batch that does not split over dp keeps 1, so that make_plan names the real problem.
  if (out.empty()) out.push_back(1);
  return out;
}

// One micro_batch's virtual_stages values, ascending; empty when a set interleaving cannot run it.
std::vector<std::int64_t> virtual_stage_values(const workload::ModelSpec& model, const TrainingSpec& training,
                                               const ParallelismSpec& p, std::int64_t micro_batch,
                                               std::int64_t v_max) {
  // Interleaving needs the micro-batches per pipeline to be a multiple of pp (check_plan).
  const std::int64_t per_step = p.dp * micro_batch;
  const bool pipeline_divides = per_step > 0 && training.global_batch % per_step == 0 &&
                                (training.global_batch / per_step) % p.pp == 0;
  if (p.virtual_stages) {
    const bool interleaved = *p.virtual_stages > 1 && p.schedule.value_or(PipelineSchedule::Interleaved) ==
                                                          PipelineSchedule::Interleaved;
    // A set micro_batch stays, so that make_plan names the problem.
    if (interleaved && !pipeline_divides && !training.micro_batch) return {};
    return {*p.virtual_stages};
  }
  const bool set_interleaved = p.schedule == PipelineSchedule::Interleaved;
  std::vector<std::int64_t> out;
  if (!p.schedule || !set_interleaved) out.push_back(1);
  if (p.schedule && !set_interleaved) return out;  // gpipe or 1f1b: one chunk per rank
  if (p.pp <= 1 || !pipeline_divides) return out;
  if (model.layers % p.pp != 0) {
    // Megatron-LM cannot interleave an uneven split; a set interleaving takes the rule's v = 2.
    if (set_interleaved && 2 * p.pp <= model.layers) out.push_back(2);
    return out;
  }
  const std::int64_t per_stage = model.layers / p.pp;
  for (std::int64_t v = 2; v <= per_stage; ++v) {
    if (per_stage % v != 0) continue;
    // The cap cuts deep interleavings, but never a set interleaving's only (smallest) value.
    const bool first_interleaving = set_interleaved && out.empty();
    if (v > v_max && !first_interleaving) break;
    out.push_back(v);
  }
  return out;
}

std::vector<PlanCandidate> enumerate(const workload::ModelSpec& model, const TrainingSpec& training,
                                     const ParallelismSpec& p, Limits limits, const PlanCandidate* own) {
  const auto own_value = [own](auto member) { return own != nullptr ? own->parallelism.*member : std::nullopt; };
  std::vector<Recompute> recomputes(kRecompute.begin(), kRecompute.end());
  include(recomputes, own_value(&ParallelismSpec::recompute));
  if (p.recompute) recomputes = {*p.recompute};
  std::vector<int> zeros{0};
  if (p.zero) {
    zeros = {*p.zero};
  } else if (p.dp * p.cp > 1) {
    zeros.push_back(1);
  }
  if (!p.zero) include(zeros, own_value(&ParallelismSpec::zero));
  std::vector<bool> sps{false};
  if (p.sequence_parallel) {
    sps = {*p.sequence_parallel};
  } else if (p.tp > 1 && training.seq_len % p.tp == 0) {
    sps.push_back(true);
  }
  if (!p.sequence_parallel) include(sps, own_value(&ParallelismSpec::sequence_parallel));
  const std::optional<std::int64_t> own_micro_batch = own != nullptr ? own->training.micro_batch : std::nullopt;
  std::vector<PlanCandidate> out;
  for (const std::int64_t b : micro_batch_values(training, p, limits.mb_max, own_micro_batch)) {
    for (const std::int64_t v : virtual_stage_values(model, training, p, b, limits.v_max)) {
      for (const Recompute rc : recomputes) {
        for (const int z : zeros) {
          for (const bool sp : sps) {
            PlanCandidate c{training, p};
            c.training.micro_batch = b;
            c.parallelism.virtual_stages = v;
            c.parallelism.schedule = p.schedule.value_or(v > 1 ? PipelineSchedule::Interleaved
                                                               : PipelineSchedule::OneFOneB);
            c.parallelism.recompute = rc;
            c.parallelism.zero = z;
            c.parallelism.sequence_parallel = sp;
            out.push_back(std::move(c));
          }
        }
      }
    }
  }
  return out;
}

// Whether two plans agree on the band fields, the only ones a candidate sets besides the attention
// kernel (the rest comes from the same input).
bool same_band_fields(const PlanCandidate& a, const PlanCandidate& b) {
  const auto& p = a.parallelism;
  const auto& q = b.parallelism;
  return a.training.micro_batch == b.training.micro_batch && p.virtual_stages == q.virtual_stages &&
         p.schedule == q.schedule && p.recompute == q.recompute && p.zero == q.zero &&
         p.sequence_parallel == q.sequence_parallel;
}

// Whether `c` is the plan `run` ran.
bool same_plan(const PlanCandidate& c, const StepRun& run) {
  return c.training.attention == run.resolved.training.attention &&
         same_band_fields(c, {run.resolved.training, run.resolved.parallelism});
}

}  // namespace

std::vector<PlanCandidate> band_candidates(const workload::ModelSpec& model, const TrainingSpec& training,
                                           const ParallelismSpec& parallelism, const PlanCandidate* own) {
  // The count grows with v_max, then with mb_max: lower v_max first, then mb_max, until it fits.
  Limits limits{std::max<std::int64_t>(1, model.layers), kMicroBatches.back()};
  std::vector<PlanCandidate> out = enumerate(model, training, parallelism, limits, own);
  while (out.size() > kMaxBandCandidates && limits.v_max > 1) {
    --limits.v_max;
    out = enumerate(model, training, parallelism, limits, own);
  }
  while (out.size() > kMaxBandCandidates && limits.mb_max > 1) {
    limits.mb_max /= 2;
    out = enumerate(model, training, parallelism, limits, own);
  }
  // Unreachable with the values above (one micro_batch and one v make at most 4 x 3 x 2 = 24).
  if (out.size() > kMaxBandCandidates) out.resize(kMaxBandCandidates);
  // The prediction's plan, when the cap cut its micro_batch or v, or a set schedule or the
  // software's put it outside the enumeration: one candidate beyond the cap.
  if (own != nullptr &&
      std::none_of(out.begin(), out.end(), [own](const PlanCandidate& c) { return same_band_fields(c, *own); })) {
    PlanCandidate c{training, parallelism};
    c.training.micro_batch = own->training.micro_batch;
    c.parallelism.virtual_stages = own->parallelism.virtual_stages;
    c.parallelism.schedule = own->parallelism.schedule;
    c.parallelism.recompute = own->parallelism.recompute;
    c.parallelism.zero = own->parallelism.zero;
    c.parallelism.sequence_parallel = own->parallelism.sequence_parallel;
    out.push_back(std::move(c));
  }
  return out;
}

std::string describe(const PlanCandidate& c) {
  const auto& p = c.parallelism;
  return fmt::format("micro_batch {}, virtual_stages {} ({}), recompute {}, zero {}, sequence_parallel {}",
                     *c.training.micro_batch, *p.virtual_stages, trnsim::to_string(*p.schedule),
                     workload::recompute_text(*p.recompute), *p.zero, *p.sequence_parallel ? "on" : "off");
}

PlanBand plan_band(const StepInput& input, const StepRun* prediction, bool fast_forward) {
  const workload::ResolvedPlan resolved = resolve_plan(input);
  const PlanCandidate own{resolved.training, resolved.parallelism};
  std::vector<PlanCandidate> candidates = band_candidates(input.model, input.training, input.parallelism, &own);
  PlanBand band;
  band.candidates = candidates.size();
  if (candidates.empty()) return band;
  // Not a band field: the value the prediction runs with (the software's kernel).
  for (auto& c : candidates) c.training.attention = resolved.training.attention;

  const bool reusable = prediction != nullptr && input.network == net::NetworkModelKind::Analytic;
  StepInput analytic = input;
  analytic.network = net::NetworkModelKind::Analytic;
  const double capacity = rank_memory_capacity(input.cluster);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    // The prediction's own plan as resolved: with the rule's FSDP prefetch depth, not a band field.
    const PlanCandidate& c = same_band_fields(candidates[i], own) ? own : candidates[i];
    const double need = workload::estimate_memory(input.model, c.training, c.parallelism, input.software).peak().total();
    const bool fits = need <= capacity;
    if (fits) ++band.fit;
    if (!fits && candidates.size() > 1) {
      spdlog::debug("plan band: candidate {} ({}): needs {:.4g} B of {:.4g} B, not replayed", i, describe(c), need,
                    capacity);
      continue;
    }
    double t = 0;
    if (reusable && same_plan(c, *prediction)) {
      t = prediction->timeline.step_time.to_seconds();
      spdlog::debug("plan band: candidate {} ({}): step {:.6f} s, the prediction's", i, describe(c), t);
    } else {
      bool fast_forwarded = false;
      t = step_time_seconds(analytic, {c.training, c.parallelism, {}}, fast_forward, nullptr, &fast_forwarded);
      spdlog::debug("plan band: candidate {} ({}): step {:.6f} s{}", i, describe(c), t,
                    fast_forwarded ? ", fast-forwarded" : "");
    }
    // Strict comparisons: the earlier candidate keeps a tie.
    if (band.simulated == 0 || t < band.fastest_s) {
      band.fastest_s = t;
      band.fastest = c;
    }
    if (band.simulated == 0 || t > band.slowest_s) {
      band.slowest_s = t;
      band.slowest = c;
    }
    ++band.simulated;
  }
  spdlog::debug("plan band: {} candidates, {} fit, {} replayed; fastest {:.6f} s, slowest {:.6f} s", band.candidates,
                band.fit, band.simulated, band.fastest_s, band.slowest_s);
  return band;
}

}  // namespace trnsim::replay
