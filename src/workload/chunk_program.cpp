#include "chunk_program.hpp"

#include <fmt/format.h>

namespace trnsim::workload {
namespace {

const char* category_tag(Category c) {
  switch (c) {
    case Category::Forward: return "fwd";
    case Category::Backward: return "bwd";
    case Category::Recompute: return "recompute";
    case Category::Optimizer: return "optimizer";
    default: return "comm";
  }
}

std::string signature(const Work& w) {
  std::string key = w.name;
  for (const auto& k : w.kernels) {
    key += fmt::format("|{},{},{},{},{},{},{},{},{},{},{},{}", k.name, static_cast<int>(k.op), k.m, k.n, k.k,
                       k.batch, static_cast<int>(k.causal), k.vector_elements, k.scalar_elements, k.hbm_bytes,
                       k.flops, k.low_precision);
  }
  return key;
}

}  // namespace

std::uint32_t WorkTable::intern(Work work) {
  std::string key = signature(work);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(works_.size());
  works_.push_back(std::move(work));
  index_.emplace(std::move(key), id);
  return id;
}

std::vector<Segment> cut_segments(const Steps& steps, const std::vector<GradientMark>& marks, WorkTable& works) {
  std::vector<Segment> out;
  Work pending;
  Segment pending_seg;
  auto flush = [&] {
    if (pending.kernels.empty()) return;
    pending.name = fmt::format("{}:{}..{}", category_tag(pending_seg.category), pending.kernels.front().name,
                               pending.kernels.back().name);
    pending_seg.work = works.intern(std::move(pending));
    out.push_back(pending_seg);
    pending = Work{};
  };
  std::size_t mark = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.kind == Step::Kind::Cut) {
      flush();
    } else if (s.kind == Step::Kind::TpCollective || s.kind == Step::Kind::EpCollective) {
      flush();
      Segment seg;
      seg.collective = true;
      seg.expert = s.kind == Step::Kind::EpCollective;
      seg.category = s.category;
      seg.layer = s.layer;
      seg.op = s.op;
      seg.bytes = s.bytes;
      seg.overlapped = s.overlapped;
      out.push_back(seg);
    } else {
      if (!pending.kernels.empty() && pending_seg.category != s.category) flush();
      if (pending.kernels.empty()) pending_seg = Segment{};
      pending_seg.category = s.category;
      pending_seg.layer = s.layer;
      pending.kernels.push_back(s.kernel);
    }
    // A gradient mark after step i belongs to the segment that holds step i: the last one, or the
    // pending compute segment.
    for (; mark < marks.size() && marks[mark].step == i; ++mark) {
      Segment* holder = !pending.kernels.empty() ? &pending_seg : out.empty() ? nullptr : &out.back();
      if (holder != nullptr) {
        holder->gradient_params += marks[mark].params;
        holder->expert_gradient_params += marks[mark].expert_params;
      }
    }
  }
  flush();
  return out;
}

}  // namespace trnsim::workload
