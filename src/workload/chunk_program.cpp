#include "chunk_program.hpp"

#include <cstdint>
#include <string>

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

// Appends the object representation of a number: equal keys mean bit-equal fields.
template <class T>
void append_bits(std::string& key, T v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Works are equal when their names and every field of every kernel are (bit for bit); the key is
// binary, not formatted text, since a plan interns one per segment of every chunk program.
std::string signature(const Work& w) {
  std::string key = w.name;
  key += '\0';
  for (const auto& k : w.kernels) {
    key += k.name;
    key += '\0';
    append_bits(key, static_cast<int>(k.op));
    for (const std::int64_t v : {k.m, k.n, k.k, k.batch}) append_bits(key, v);
    append_bits(key, static_cast<int>(k.causal));
    for (const double v : {k.vector_elements, k.scalar_elements, k.hbm_bytes, k.flops, k.element_bytes}) append_bits(key, v);
    append_bits(key, static_cast<unsigned char>(k.low_precision ? 1 : 0));
    append_bits(key, static_cast<unsigned char>(k.fused_epilogue ? 1 : 0));
    append_bits(key, static_cast<unsigned char>(k.transpose ? 1 : 0));
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
    } else if (s.kind == Step::Kind::TpCollective || s.kind == Step::Kind::EpCollective ||
               s.kind == Step::Kind::CpCollective) {
      flush();
      Segment seg;
      seg.collective = true;
      seg.expert = s.kind == Step::Kind::EpCollective;
      seg.context = s.kind == Step::Kind::CpCollective;
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
