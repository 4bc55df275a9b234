#pragma once
// An experiment whose workload is a trace ("workload": {"trace": PATH}): the replay layer's input
// and the trace, and the "source" block an exported trace carries.
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/config/experiment.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/workload/plan.hpp"
#include "trnsim/trace/trace.hpp"

namespace trnsim::config {

// The trace file an experiment names, relative to the experiment file's folder ("" when the
// experiment builds its step from a model).
std::string trace_path(const Experiment& experiment);

struct TraceInput {
  replay::StepInput input;  // model/training/parallelism from the trace's "source", else empty
  trace::Trace trace;
};

// Contract: reads and checks the experiment's trace (trace::read_trace) and parses its
// "source" (model, training, parallelism: the resolved plan it was built from) with the same
// checks as an experiment's; InputError naming the trace file and the JSON path.
TraceInput trace_input(const Experiment& experiment);

// The "source" block of a trace exported from a model run: the model and the resolved plan.
nlohmann::json trace_source(const workload::ModelSpec& model, const workload::ResolvedPlan& plan);

}  // namespace trnsim::config
