#pragma once
// A model chunk's forward or backward for one micro-batch as a list of task templates
// ("segments"): build_step instantiates it once per micro-batch. Built once per (stage, chunk).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "layer_steps.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::workload {

struct Segment {
  bool collective = false;          // TP collective, else compute
  bool expert = false;              // collective: on the EP group (an all-to-all), not the TP group
  bool context = false;             // collective: on the CP group (ring neighbours for send-recv)
  Category category = Category::Forward;
  std::int32_t layer = -1;
  std::uint32_t work = 0;           // compute: index into StepGraph::works
  CollectiveOp op = CollectiveOp::AllReduce;
  double bytes = 0;                 // collective: per-rank buffer
  bool overlapped = false;          // collective: alongside the next compute segment (Step::overlapped)
  double gradient_params = 0;       // parameters whose gradient is complete after this segment
  double expert_gradient_params = 0;  // of those, routed experts' (their DP group is dp / ep)
};

// Builds Work entries once: identical kernel lists map to one index.
class WorkTable {
 public:
  explicit WorkTable(std::vector<Work>& works) : works_(works) {}
  std::uint32_t intern(Work work);

 private:
  std::vector<Work>& works_;
  std::map<std::string, std::uint32_t> index_;
};

// A gradient completion point in a step list: after step `step`, `params` have their gradient.
struct GradientMark {
  std::size_t step = 0;
  double params = 0;
  double expert_params = 0;  // of params, routed experts'
};

// Cuts steps into segments at every collective and every change of category.
std::vector<Segment> cut_segments(const Steps& steps, const std::vector<GradientMark>& marks, WorkTable& works);

}  // namespace trnsim::workload
