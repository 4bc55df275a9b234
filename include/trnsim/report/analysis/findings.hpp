#pragma once
// Bottleneck findings: rules that read a StepReport's figures and say what holds the step back,
// with the evidence and the knob that moves it. Each rule's `seconds` is the step time it costs,
// counted so that two rules do not claim the same time:
//   exposed_tp_comm, pipeline_send_recv, exposed_dp_comm, pipeline_bubble, recompute: the
//     bottleneck rank's breakdown part of that name (report/analysis/breakdown.hpp);
//   (exposed_tp_comm less the MoE all-to-alls, which run on the TP stream and which
//   moe_all_to_all claims: the bottleneck rank's seconds in them, and less the CP K/V exchanges
//   cp_exposed claims: StepReport::cp_exposed_s, their seconds with no compute of the rank beside);
//   fsdp_exposed_gather: under zero 3 in place of exposed_dp_comm, the same part (the per-layer
//     gathers and reduce-scatters are the DP stream's work);
//   expert_imbalance: the bottleneck rank's expert GEMM seconds x (1 - 1 / load), what a balanced
//     router would save;
//   unbalanced_stages: compute of the slowest stage minus the mean over stages;
//   hbm_bound_ops: time HBM-bound norm/activation/elementwise/... kernels spend beyond their next
//     busiest engine; low_arithmetic_intensity: the same for matmul and attention kernels;
//   compute_bound: compute time beyond the tensor-engine peak on the executed FLOPs, less what
//     the two HBM rules claim;
//   out_of_memory, tp_spans_instances, hot_link, generic_precision_recipe: 0 (the first blocks
//     the run; the time of the next two shows in the exposed-communication rules; the last says
//     the software states no precision recipe for the training dtype, so the generic one ran).
// Rules that cost time are reported from kMinStepShare of the step time. The list is ranked:
// out_of_memory first (the run cannot happen as planned), then by seconds, rule order on ties,
// then the rules of 0 seconds.
#include <string>
#include <vector>

#include "trnsim/report/analysis/step_report.hpp"

namespace trnsim::report {

// A rule costing less than this share of the step time is noise, not a finding.
inline constexpr double kMinStepShare = 0.01;
// compute_bound applies when the bottleneck rank computes for at least this share of the step.
inline constexpr double kComputeBoundShare = 0.5;
// unbalanced_stages applies when the slowest stage computes this much more than the mean.
inline constexpr double kImbalanceShare = 0.05;
// hot_link applies when the busiest link is busy for at least this share of the step.
inline constexpr double kHotLinkShare = 0.5;

// Contract: the ranked findings of `report` (every other field filled by analyze);
// `layout_findings`: StepGraph::findings (TP groups spanning instances). O(stages + links).
std::vector<Finding> find_bottlenecks(const StepReport& report, const std::vector<std::string>& layout_findings);

// One finding per stage that does not fit, naming the dominant memory term and its remedy.
std::vector<Finding> memory_findings(const StepReport& report);

}  // namespace trnsim::report
