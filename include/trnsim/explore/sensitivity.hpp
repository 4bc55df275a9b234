#pragma once
// `trnsim sensitivity`: what each hardware figure of an experiment's cluster buys its step time.
// Each figure is raised in turn by one step (x' = x (1 + step); a latency or start-up cost raised
// is a larger one) and the experiment's plan simulated again; the response is reported as the
// log-elasticity
//     e = ln(t'/t) / ln(x'/x),
// which is exactly -1 when the step time is inversely proportional to the figure (t' = t x/x',
// whatever the step), +1 when proportional, 0 when the figure does not matter. For a 10 % step,
// e = -1 means the step is 1/1.1 as long (-9.09 %), not 10 % shorter.
//
// HBM capacity is different: more of it changes nothing for the same plan, so it is answered by a
// small search over plans that trade memory for speed (kCapacityGrid below), at the base and at
// the raised capacity: how many fit, and the fastest among them.
//
// Runs every simulation of one call on the sweep's pool (explore/sweep.hpp: evaluate_plan,
// parallel_for): the result is the same for any thread count.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/explore/sweep.hpp"

namespace trnsim::explore {

// The plans of the capacity search, around the experiment's resolved plan (tp, pp, micro-batch m,
// recompute r): tp in {tp, tp/2}, pp in {pp, pp/2} (halves only of even degrees), micro-batch in
// {m, 2m}, recompute in {r, one step less} (full -> selective -> none; selective-op and
// full-every-n -> none; none stays), dp derived (ranks / (tp x pp x cp)), every other field the
// experiment's. At most 16 plans, each using at least as much memory per rank as the experiment's
// in one of these directions.
inline constexpr const char* kCapacityGrid =
    "tp {tp, tp/2} x pp {pp, pp/2} (halves of even degrees) x micro-batch {m, 2m} x recompute {r, one step "
    "less}; dp derived, the rest as the experiment";

// One figure raised: where it lives in the resolved experiment, its values and the response.
struct FigureResponse {
  std::size_t order = 0;      // in the fixed figure order (the tie-break of the ranking)
  std::string name;           // "tensor-engine peak", "HBM bandwidth", "NeuronLink latency", ...
  std::string unit;           // of base_value and new_value: the key's unit ("TFLOPS", "GB/s", "us")
  std::vector<std::string> paths;  // the --set paths raised together (the first one is shown)
  // The figure that stops this one, raised alone, from taking its full effect (empty: none): on
  // Trainium the DMA engines move what kernels read from HBM (min of the two), and a collective
  // transfer moves at most one stream's rate whatever its link. Such a figure is followed by one
  // that raises the pair together ("HBM bandwidth + DMA bandwidth").
  std::string capped_by;
  double base_value = 0, new_value = 0;
  double step_time_s = 0;     // the experiment's plan with the figure raised
  double change = 0;          // t'/t - 1
  double elasticity = 0;      // ln(t'/t) / ln(x'/x)
};

// A figure this cluster does not have (or has at 0, which no step raises), and why.
struct SkippedFigure {
  std::string name, reason;
};

// The capacity search at one HBM capacity.
struct CapacityPoint {
  double hbm_GiB = 0;           // per chip
  std::size_t fit = 0;          // plans of the grid that are valid and fit in memory
  std::optional<PlanOutcome> best;  // the fastest of them (ties: the earlier in the grid)
};

struct CapacitySearch {
  std::string grid;          // its values: "tp {8, 4} x pp {1} x micro-batch {1, 2} x recompute {...}"
  std::size_t plans = 0;     // in the grid
  std::size_t invalid = 0;   // that cannot run the model whatever the memory
  CapacityPoint base, raised;
};

struct SensitivityOptions {
  double step = 0.1;                    // x' = x (1 + step); step != 0, > -1
  std::vector<std::string> overrides;   // --set PATH=VALUE, before every figure's change
  int threads = 1;
  std::function<void(std::size_t, std::size_t)> progress;  // as SweepOptions::progress
  // --max-memory (0: no limit, --force): as SweepOptions::max_memory_bytes, checked before the
  // experiment's plan is simulated (that plan alone) and before the pool (every simulation of it).
  double max_memory_bytes = 0;
  bool fast_forward = true;  // as SweepOptions::fast_forward
};

struct SensitivityResult {
  std::string experiment;  // the file as given
  std::string title;       // as the sweep's
  double step = 0;
  PlanOutcome base;        // the experiment's plan, simulated
  std::vector<FigureResponse> figures;  // by |elasticity| descending, ties in the fixed order
  std::vector<SkippedFigure> skipped;   // in the fixed order
  CapacitySearch capacity;
};

// Contract: "10%", "10", "0.5%", "-20%" (a percentage, the sign optional) as a fraction. Throws
// InputError naming --step for anything else, for 0 and for -100 % or below.
double parse_step(const std::string& text);

// Contract: the figures of `document` (an experiment file's JSON, `file` names it) raised one at a
// time by options.step. Throws InputError for bad input: an unreadable experiment or override, a
// step the figures' ranges refuse, or a plan that does not run (invalid or out of memory: nothing
// to compare). Cost: 1 + (figures) simulations of the plan and at most 32 of the capacity grid's.
SensitivityResult run_sensitivity(const nlohmann::json& document, const std::string& file,
                                  const SensitivityOptions& options);

}  // namespace trnsim::explore
