// trnsim export-trace EXPERIMENT.json -o F [--all-ranks] [--set PATH=VALUE]...: the StepGraph of an
// experiment as an execution trace (traces/README.md), which `trnsim run` replays through an
// experiment with "workload": {"trace": F}.
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "output_file.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/config/trace_input.hpp"
#include "trnsim/hw/device_map.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/trace/chakra.hpp"
#include "trnsim/trace/trace.hpp"

namespace trnsim::cli {

namespace {

struct ExportTraceOptions {
  std::string experiment;
  std::string output;
  std::vector<std::string> overrides;
  bool all_ranks = false;
  std::string format = "trnsim";
};

// Writes `graph` in the chosen format; returns what it wrote, for the summary line.
std::string write_trace(const ExportTraceOptions& o, const workload::StepGraph& graph, const trace::TraceMeta& meta) {
  if (o.format == "trnsim") {
    write_file(o.output, [&](std::ostream& out) { trace::write_trace_json(out, graph, meta); });
    return o.output;
  }
  // Each file whole or not at all (write_file); when one fails, the ones this export already wrote
  // are removed too, so that no mix of this export's ranks and an older one's is left behind.
  std::vector<std::string> written;
  try {
    const auto files = trace::write_chakra(
        o.output, graph, o.format == "chakra" ? trace::ChakraEncoding::Binary : trace::ChakraEncoding::Json,
        [&](const std::string& path, const std::function<void(std::ostream&)>& write) {
          write_file(path, write);
          written.push_back(path);
        });
    return fmt::format("{} files {}.*", files.size(), o.output);
  } catch (...) {
    for (const std::string& path : written) std::remove(path.c_str());
    throw;
  }
}

int run_export_trace(const ExportTraceOptions& o) {
  const config::Experiment ex = config::load_experiment(o.experiment, o.overrides);
  trace::TraceMeta meta;
  meta.cluster_instance = ex.cluster.instance.name;
  meta.cluster_count = ex.cluster.instances;
  if (!ex.trace.empty()) {
    // A trace experiment: the trace again, checked and rewritten (the cluster it came from kept).
    config::TraceInput t = config::trace_input(ex);
    if (!t.trace.cluster_instance.empty()) {
      meta.cluster_instance = t.trace.cluster_instance;
      meta.cluster_count = t.trace.cluster_count;
    }
    meta.dtype = t.trace.dtype;
    meta.source = t.trace.source;
    const std::string wrote = write_trace(o, t.trace.graph, meta);
    fmt::print("wrote {}: {} nodes on {} ranks\n", wrote, t.trace.graph.tasks.size(), t.trace.graph.simulated_ranks.size());
    return 0;
  }
  replay::StepInput input = config::step_input(ex);
  input.symmetric = !o.all_ranks;
  const workload::ResolvedPlan resolved = replay::resolve_plan(input);
  const replay::StepRun run = replay::prepare_step(input, resolved);
  meta.dtype = resolved.training.precision;
  meta.source = config::trace_source(ex.model, resolved);
  const std::string wrote = write_trace(o, run.graph, meta);
  fmt::print("wrote {}: {} nodes on {} of {} ranks{}\n", wrote, run.graph.tasks.size(), run.graph.simulated_ranks.size(),
             run.graph.total_ranks, o.all_ranks ? "" : " (the others are replicas, listed in the groups and pairs)");
  return 0;
}

}  // namespace

void add_export_trace_command(CLI::App& app, Action& action) {
  auto [cmd, o] = add_subcommand<ExportTraceOptions>(
      app, action, "export-trace",
      "Write the step an experiment builds as an execution trace (trnsim's JSON format, traces/README.md); "
      "`trnsim run` replays it from an experiment with \"workload\": {\"trace\": FILE}",
      run_export_trace);
  cmd->add_option("experiment", o->experiment, "Experiment file (JSON)")->required();
  cmd->add_option("-o,--output", o->output,
                  "Trace file to write (trnsim); for Chakra the prefix: PREFIX.<rank>.et (or .json) per rank and "
                  "PREFIX.groups.json")
      ->required();
  cmd->add_option("--format", o->format,
                  "trnsim (JSON, default), chakra (binary protobuf, varint-delimited, per rank) or chakra-json (Chakra's "
                  "JSON rendering); Chakra keeps FLOPs and HBM bytes per compute node, not matmul shapes, and needs "
                  "--all-ranks (no replicas); context parallelism's ring steps become send and recv node pairs "
                  "(traces/README.md)")
      ->check(CLI::IsMember({"trnsim", "chakra", "chakra-json"}));
  cmd->add_option("--set", o->overrides, "Override a value of the resolved experiment: PATH=VALUE, as `trnsim run --set`");
  cmd->add_flag("--all-ranks", o->all_ranks,
                "Give every rank its own nodes (default: one simulated rank per pipeline stage, the other ranks "
                "listed as replicas in the groups and pairs)");
}

}  // namespace trnsim::cli
