// trnsim sensitivity's runner: the figures of the experiment's cluster, one variant of the
// experiment per figure raised, and the capacity grid at two capacities, all simulated in one pool
// (contracts in explore/sensitivity.hpp).
#include "trnsim/explore/sensitivity.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>
#include <fmt/format.h>

#include "trnsim/config/experiment.hpp"
#include "trnsim/enum_names.hpp"
#include "trnsim/error.hpp"
#include "trnsim/report/analysis/compare.hpp"

namespace trnsim::explore {
namespace {

// A figure of the fixed order: the --set paths it is raised through (the first is the one shown;
// the others follow it by the same factor) and the unit of the first key.
struct Figure {
  // A constructor, not an aggregate: GCC's -Wmissing-field-initializers (-Wextra) flags every
  // brace list that leaves capped_by out.
  Figure(std::string figure, std::string figure_unit, std::vector<std::string> figure_paths, std::string cap = {})
      : name(std::move(figure)), unit(std::move(figure_unit)), paths(std::move(figure_paths)), capped_by(std::move(cap)) {}
  std::string name, unit;
  std::vector<std::string> paths;
  std::string capped_by{};  // FigureResponse::capped_by
};

std::string pointer(const std::string& dotted) {
  std::string out = "/" + dotted;
  std::replace(out.begin(), out.end(), '.', '/');
  return out;
}

// The figure at `path` in the resolved experiment: the value there, or, where it is null (not
// stated: a collective figure of the runtime release), the one its object shows under "derived".
// Raising it sets `path` itself, which then overrides the release's (config::apply_collective_runtime).
const nlohmann::json* figure_at(const config::Experiment& ex, const std::string& path) {
  const nlohmann::json::json_pointer at(pointer(path));
  if (!ex.resolved.contains(at)) return nullptr;
  const nlohmann::json& v = ex.resolved[at];
  if (v.is_null()) {
    const nlohmann::json::json_pointer derived = at.parent_pointer() / "derived" / at.back();
    return ex.resolved.contains(derived) ? &ex.resolved[derived] : nullptr;
  }
  return &v;
}

bool has_positive(const config::Experiment& ex, const std::string& path) {
  const nlohmann::json* v = figure_at(ex, path);
  return v != nullptr && v->is_number() && v->get<double>() > 0;
}

double resolved_value(const config::Experiment& ex, const std::string& path) {
  const nlohmann::json* v = figure_at(ex, path);
  if (v == nullptr || !v->is_number())
    throw InternalError(fmt::format("sensitivity: the resolved experiment has no number at {}", path));
  return v->get<double>();
}

// The figures of the fixed order this cluster has; the others go to `skipped` with the reason.
// Names follow the hardware: NeuronLink on Trainium, NVLink on GPUs (configs/hardware/*.json).
std::vector<Figure> figures_of(const config::Experiment& ex, double step, std::vector<SkippedFigure>& skipped) {
  const hw::InstanceSpec& inst = ex.cluster.instance;
  const bool gpu = inst.chip.family == hw::Family::Gpu;
  std::vector<Figure> out;
  const auto add = [&](bool present, Figure f, const std::string& reason) {
    if (present && has_positive(ex, f.paths.front())) {
      out.push_back(std::move(f));
    } else {
      skipped.push_back({f.name, present ? f.paths.front() + " is 0 in this cluster: no factor raises it" : reason});
    }
  };

  // The peak of every format, scaled alike: on Trainium the BF16 peak sets the PE-array clock and
  // the others are rates relative to it (cost/compute_model.cpp), so raising BF16 alone would
  // leave FP32 matmuls as fast as before; on GPUs each format runs at its own peak. Formats a chip
  // does not support (0) stay 0.
  Figure peak{"tensor-engine peak", "TFLOPS (BF16)", {"cluster.chip.peak.bf16_tflops"}};
  for (const char* f : {"fp32_tflops", "tf32_tflops", "fp16_tflops", "fp8_tflops"}) {
    const std::string path = fmt::format("cluster.chip.peak.{}", f);
    if (has_positive(ex, path)) peak.paths.push_back(path);
  }
  if (gpu) peak.name = "tensor-core peak";
  add(true, peak, "");
  // Stream engines: the rate is elements per cycle x clock; the elements per cycle move it alone
  // (the clock of the vector and scalar engines is used nowhere else).
  add(true, {gpu ? "vector rate (CUDA cores)" : "vector-engine rate", "elements/cycle",
             {"cluster.chip.core.vector.elements_per_cycle"}}, "");
  add(true, {gpu ? "scalar rate (special-function units)" : "scalar-engine rate", "elements/cycle",
             {"cluster.chip.core.scalar.elements_per_cycle"}}, "");
  // Trainium's DMA engines move what a kernel reads from HBM (the compute model takes the lower of
  // the two rates) and every byte a core sends: each of HBM and DMA caps the other once raised
  // past it, and a pair figure raises both.
  const double factor = 1 + step;
  const hw::ChipSpec& chip = inst.chip;
  const bool dma = chip.dma_bandwidth > 0;
  const auto caps = [&](double capping, double raised) { return capping > 0 && capping < raised * factor; };
  const Figure hbm{"HBM bandwidth", "GB/s", {"cluster.chip.hbm_bandwidth_GBps"},
                   dma && caps(chip.dma_bandwidth, chip.hbm_bandwidth) ? "DMA bandwidth" : ""};
  add(true, hbm, "");
  const Figure dma_figure{"DMA bandwidth", "GB/s", {"cluster.chip.dma_bandwidth_GBps"},
                          dma && caps(chip.hbm_bandwidth, chip.dma_bandwidth) ? "HBM bandwidth" : ""};
  add(dma, dma_figure,
      gpu ? "GPUs have no DMA-engine figure" : "the chip declares no DMA figure (copies move at half the HBM bandwidth)");
  if (dma && (!hbm.capped_by.empty() || !dma_figure.capped_by.empty()))
    add(true, {"HBM bandwidth + DMA bandwidth", "GB/s", {hbm.paths.front(), dma_figure.paths.front()}}, "");
  // What one collective stream moves toward one peer in a step, against what one link carries:
  // a transfer moves at the lower of the two (net/closed_form.hpp), so each caps the other.
  const double stream = inst.calibration.collective_stream_bandwidth;
  const double per_link = inst.intra_link_bandwidth();
  const std::string link = gpu ? "NVLink" : "NeuronLink";
  const Figure stream_figure{"collective stream rate", "GB/s", {"cluster.calibration.collective_stream_GBps"},
                             caps(per_link, stream) ? link + " bandwidth" : ""};
  add(stream > 0, stream_figure, "no per-stream limit in this preset (collectives move at the links' rate)");
  const bool intra = inst.intra.bandwidth > 0;
  const std::string no_intra = fmt::format("{} has one chip: no chip-to-chip link", inst.name);
  const Figure link_figure{link + " bandwidth", "GB/s", {"cluster.intra.bandwidth_GBps"},
                           stream > 0 && caps(stream, per_link) ? "collective stream rate" : ""};
  add(intra, link_figure, no_intra);
  if (intra && stream > 0 && (!link_figure.capped_by.empty() || !stream_figure.capped_by.empty()))
    add(true, {link + " bandwidth + collective stream rate", "GB/s", {link_figure.paths.front(), stream_figure.paths.front()}},
        "");
  add(intra, {link + " latency", "us", {"cluster.intra.latency_us"}}, no_intra);
  const bool ultra = inst.ultraserver_instances > 1;
  const std::string no_ultra = fmt::format("{} is not an UltraServer", inst.name);
  add(ultra, {"UltraServer link bandwidth", "GB/s", {"cluster.ultraserver_link.bandwidth_GBps"}}, no_ultra);
  add(ultra, {"UltraServer link latency", "us", {"cluster.ultraserver_link.latency_us"}}, no_ultra);
  const bool rack = inst.inter_rack_link.bandwidth > 0;
  const std::string no_rack = fmt::format("{} has no inter-rack links", inst.name);
  add(rack, {"inter-rack link bandwidth", "GB/s", {"cluster.inter_rack_link.bandwidth_GBps"}}, no_rack);
  add(rack, {"inter-rack link latency", "us", {"cluster.inter_rack_link.latency_us"}}, no_rack);
  const bool efa = inst.nics > 0;
  const std::string no_efa = fmt::format("{} has no EFA", inst.name);
  const std::string net = gpu ? "inter-node network" : "EFA";
  add(efa, {net + " bandwidth", "Gb/s", {"cluster.efa.bandwidth_Gbps"}}, no_efa);
  add(efa, {net + " latency", "us", {"cluster.efa.latency_us"}}, no_efa);
  // Collective start-up: the calibration's fixed costs (net/closed_form.hpp), one figure each.
  add(true, {"collective launch", "us", {"cluster.calibration.collective_launch_us"}}, "");
  add(true, {"collective step sync", "us", {"cluster.calibration.collective_step_us"}}, "");
  add(true, {"collective per-message cost", "us", {"cluster.calibration.collective_message_us"}}, "");
  return out;
}

// "PATH=VALUE" with the value written so that it parses back to the same double.
std::string raise(const config::Experiment& ex, const std::string& path, double factor) {
  return fmt::format("{}={}", path, resolved_value(ex, path) * factor);
}

// The capacity grid around the base plan (kCapacityGrid), as sweep axes.
SweepAxes capacity_axes(const PlanOutcome& base) {
  SweepAxes a;
  const auto with_half = [](std::int64_t v) {
    return v % 2 == 0 ? std::vector<std::int64_t>{v, v / 2} : std::vector<std::int64_t>{v};
  };
  a.tp = with_half(*base.tp);
  a.pp = with_half(*base.pp);
  a.micro_batch = {*base.micro_batch, 2 * *base.micro_batch};
  const auto r = workload::parse_recompute(*base.recompute);
  a.recompute = {*r};
  if (*r == workload::Recompute::Full) a.recompute.push_back(workload::Recompute::Selective);
  // Selective (either form) and full-every-n step down to none.
  if (*r != workload::Recompute::Full && *r != workload::Recompute::None) {
    a.recompute.push_back(workload::Recompute::None);
  }
  return a;
}

std::string describe(const SweepAxes& a) {
  std::vector<std::string> recompute;
  for (workload::Recompute r : a.recompute) recompute.push_back(workload::recompute_text(r));
  return fmt::format("tp {{{}}} x pp {{{}}} x micro-batch {{{}}} x recompute {{{}}}; dp derived", fmt::join(a.tp, ", "),
                     fmt::join(a.pp, ", "), fmt::join(a.micro_batch, ", "), fmt::join(recompute, ", "));
}

// A plan outcome that is not simulated, as an error: sensitivity compares step times.
void require_simulated(const PlanOutcome& o, const std::string& file, const std::string& what) {
  if (o.status == PlanStatus::Simulated) return;
  throw InputError(fmt::format("{}: {}: the experiment's plan {}: {}", file, what,
                               o.status == PlanStatus::Invalid ? "cannot run" : "does not fit memory",
                               o.detail.empty() ? o.reason : o.detail));
}

CapacityPoint best_of(const std::vector<PlanOutcome>& grid, double hbm_GiB) {
  CapacityPoint c;
  c.hbm_GiB = hbm_GiB;
  for (const PlanOutcome& o : grid) {
    if (o.status != PlanStatus::Simulated) continue;
    ++c.fit;
    if (!c.best || o.step_time_s < c.best->step_time_s) c.best = o;
  }
  return c;
}

}  // namespace

double parse_step(const std::string& text) {
  const double step = report::parse_signed_percent(text, "--step");
  if (step == 0) throw InputError("--step: 0 % changes no figure; expected a non-zero percentage such as 10%");
  if (step <= -1)
    throw InputError(fmt::format("--step: {} lowers every figure to 0 or below; expected a percentage above -100%", text));
  return step;
}

SensitivityResult run_sensitivity(const nlohmann::json& document, const std::string& file,
                                  const SensitivityOptions& options) {
  if (!(options.step > -1) || options.step == 0 || !std::isfinite(options.step))
    throw InputError(fmt::format("--step: expected a non-zero change above -100 %, found {} %", options.step * 100));
  const double factor = 1 + options.step;
  const config::Experiment base = config::parse_experiment(document, file, options.overrides, config::PlanCheck::Deferred);

  SensitivityResult result;
  result.experiment = file;
  result.title = sweep_title(base);
  result.step = options.step;
  const std::vector<Figure> figures = figures_of(base, options.step, result.skipped);

  // One variant of the experiment per figure raised (its paths together), then the capacity.
  std::vector<config::Experiment> variants;
  for (const Figure& f : figures) {
    std::vector<std::string> overrides = options.overrides;
    for (const std::string& path : f.paths) overrides.push_back(raise(base, path, factor));
    variants.push_back(config::parse_experiment(document, file, overrides, config::PlanCheck::Deferred));
  }
  std::vector<std::string> more_hbm = options.overrides;
  more_hbm.push_back(raise(base, "cluster.chip.hbm_GiB", factor));
  const config::Experiment raised_hbm = config::parse_experiment(document, file, more_hbm, config::PlanCheck::Deferred);
  // A step too small to move a figure's double (1e-20 %) would report an elasticity of 0 (or 0/0)
  // that no simulation measured: refused before any runs, like 0 %.
  const auto check_moved = [&](const std::string& name, const std::string& path, const config::Experiment& raised) {
    const double was = resolved_value(base, path), now = resolved_value(raised, path);
    if (now == was)
      throw InputError(fmt::format("--step {} %: too small to change the {} ({} stays {}); expected a larger "
                                   "percentage such as 10%",
                                   options.step * 100, name, path, was));
  };
  for (std::size_t k = 0; k < figures.size(); ++k) check_moved(figures[k].name, figures[k].paths.front(), variants[k]);
  check_moved("HBM capacity", "cluster.chip.hbm_GiB", raised_hbm);

  // The experiment's plan as `trnsim run` takes it: its dp, not one derived.
  SweepAxes as_given;
  as_given.dp = {base.parallelism.dp};
  const PlanPoint plan = plan_points(base, as_given).front();
  const std::string what = fmt::format("the sensitivity of {}", file);
  if (options.max_memory_bytes > 0)
    check_sweep_memory(sweep_memory(1, 1, false, [&](std::size_t) { return point_step_size(base, plan); }),
                       options.max_memory_bytes, what);
  result.base = evaluate_plan(base, plan, options.fast_forward);
  require_simulated(result.base, file, "sensitivity");

  // Every other simulation in one pool: slot k < figures is figure k; then the grid at the base
  // capacity, then at the raised one.
  const SweepAxes grid_axes = capacity_axes(result.base);
  const std::vector<PlanPoint> grid = plan_points(base, grid_axes);
  result.capacity.grid = describe(grid_axes);
  std::vector<PlanOutcome> outcomes(variants.size() + 2 * grid.size());
  // The figures' variants run the experiment's plan on their clusters; the grid its plans at both capacities.
  const auto experiment_of = [&](std::size_t k) -> const config::Experiment& {
    if (k < variants.size()) return variants[k];
    return k - variants.size() < grid.size() ? base : raised_hbm;
  };
  const auto point_of = [&](std::size_t k) -> const PlanPoint& {
    return k < variants.size() ? plan : grid[(k - variants.size()) % grid.size()];
  };
  if (options.max_memory_bytes > 0)
    check_sweep_memory(sweep_memory(outcomes.size(), options.threads, false,
                                    [&](std::size_t k) { return point_step_size(experiment_of(k), point_of(k)); }),
                       options.max_memory_bytes, what);
  parallel_for(outcomes.size(), options.threads, options.progress, [&](std::size_t k) {
    outcomes[k] = evaluate_plan(experiment_of(k), point_of(k), options.fast_forward);
    if (k >= variants.size()) outcomes[k].index = (k - variants.size()) % grid.size();
  });

  const double t = result.base.step_time_s;
  for (std::size_t k = 0; k < figures.size(); ++k) {
    require_simulated(outcomes[k], file, fmt::format("{} raised", figures[k].name));
    FigureResponse r;
    r.order = k;
    r.name = figures[k].name;
    r.unit = figures[k].unit;
    r.paths = figures[k].paths;
    r.capped_by = figures[k].capped_by;
    r.base_value = resolved_value(base, r.paths.front());
    r.new_value = resolved_value(variants[k], r.paths.front());
    r.step_time_s = outcomes[k].step_time_s;
    r.change = r.step_time_s / t - 1;
    // An unchanged step time is 0, not -0 (a lowering step divides by a negative logarithm).
    r.elasticity = r.step_time_s == t ? 0 : std::log(r.step_time_s / t) / std::log(r.new_value / r.base_value);
    result.figures.push_back(std::move(r));
  }
  std::stable_sort(result.figures.begin(), result.figures.end(), [](const FigureResponse& a, const FigureResponse& b) {
    return std::abs(a.elasticity) > std::abs(b.elasticity);
  });

  const auto first = outcomes.begin() + static_cast<std::ptrdiff_t>(variants.size());
  const std::vector<PlanOutcome> at_base(first, first + static_cast<std::ptrdiff_t>(grid.size()));
  const std::vector<PlanOutcome> at_raised(first + static_cast<std::ptrdiff_t>(grid.size()), outcomes.end());
  result.capacity.plans = grid.size();
  result.capacity.invalid = static_cast<std::size_t>(std::count_if(
      at_base.begin(), at_base.end(), [](const PlanOutcome& o) { return o.status == PlanStatus::Invalid; }));
  result.capacity.base = best_of(at_base, resolved_value(base, "cluster.chip.hbm_GiB"));
  result.capacity.raised = best_of(at_raised, resolved_value(raised_hbm, "cluster.chip.hbm_GiB"));
  return result;
}

}  // namespace trnsim::explore
