#include <algorithm>

#include <fmt/core.h>

#include "trnsim/report/step_report.hpp"
#include "trnsim/workload/flops.hpp"

namespace trnsim::report {

std::string_view engine_name(cost::Engine e) {
  switch (e) {
    case cost::Engine::Tensor: return "tensor";
    case cost::Engine::Vector: return "vector";
    case cost::Engine::Scalar: return "scalar";
    case cost::Engine::Hbm: return "hbm";
  }
  return "?";
}

std::string_view op_class_name(cost::OpClass c) {
  switch (c) {
    case cost::OpClass::Matmul: return "matmul";
    case cost::OpClass::Attention: return "attention";
    case cost::OpClass::Norm: return "norm";
    case cost::OpClass::Activation: return "activation";
    case cost::OpClass::Elementwise: return "elementwise";
    case cost::OpClass::Embedding: return "embedding";
    case cost::OpClass::Loss: return "loss";
    case cost::OpClass::Optimizer: return "optimizer";
  }
  return "?";
}

StepReport analyze(const replay::StepInput& input, const replay::StepRun& run) {
  StepReport r;
  r.model = input.model.name;
  r.parameters = input.model.parameters();
  r.instance = input.cluster.instance.name;
  r.chip = input.cluster.instance.chip.name;
  r.instances = input.cluster.instances;
  r.chips = input.cluster.chips();
  r.plan = run.plan;
  r.network = input.network == net::NetworkModel::Flow ? "flow" : "analytic";
  const auto& training = run.resolved.training;
  r.seq_len = training.seq_len;
  r.global_batch = training.global_batch;
  r.step_time_s = run.timeline.step_time.to_seconds();
  const double sequences = static_cast<double>(training.global_batch);
  r.sequences_per_s = r.step_time_s > 0 ? sequences / r.step_time_s : 0;
  r.tokens_per_s = r.sequences_per_s * static_cast<double>(training.seq_len);

  r.model_flops = workload::model_flops_per_step(input.model, training);
  r.hardware_flops = workload::hardware_flops_per_step(run.graph);
  const hw::Dtype dtype = workload::matmul_dtype(training.precision);
  r.peak_flops = input.cluster.instance.chip.peak.of(dtype) * input.cluster.chips();
  if (r.step_time_s > 0 && r.peak_flops > 0) {
    r.mfu = r.model_flops / (r.step_time_s * r.peak_flops);
    r.hfu = r.hardware_flops / (r.step_time_s * r.peak_flops);
  }

  r.breakdown = step_breakdown(run.graph, run.timeline);
  for (std::size_t t = 0; t < run.graph.tasks.size(); ++t) {
    const auto& task = run.graph.tasks[t];
    if (task.rank != r.breakdown.rank) continue;
    r.bottleneck_stage = task.stage;
    if (task.kind != workload::TaskKind::Compute) continue;
    const cost::TaskCost& c = run.work_costs[task.index];
    for (std::size_t e = 0; e < r.engine_busy.size(); ++e) r.engine_busy[e] += c.engine[e];
    for (std::size_t o = 0; o < r.op_seconds.size(); ++o) r.op_seconds[o] += c.op[o];
  }

  for (const auto& stage : run.memory.stages) r.memory.push_back({stage, run.rank_memory_capacity});
  for (const std::string& m : workload::memory_findings(run.memory, run.rank_memory_capacity)) {
    r.findings.push_back({"out_of_memory", m});
  }
  for (const std::string& m : run.graph.findings) r.findings.push_back({"layout", m});
  r.choices = run.resolved.choices;

  r.ranks = run.ranks;
  r.simulated_ranks = static_cast<int>(run.graph.simulated_ranks.size());
  r.tasks = run.graph.tasks.size();
  r.events = run.timeline.events;
  r.build_seconds = run.build_seconds;
  r.simulate_seconds = run.simulate_seconds;
  return r;
}

}  // namespace trnsim::report
