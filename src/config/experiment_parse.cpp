// The training, parallelism, network and measured objects of an experiment file.
#include <algorithm>
#include <limits>
#include <sstream>

#include <fmt/core.h>

#include "parse.hpp"
#include "trnsim/config/enums.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/collective.hpp"
#include "trnsim/units.hpp"

namespace trnsim::config::detail {
using namespace trnsim::units;  // unit factors of the configuration keys
namespace {

constexpr double kInf = std::numeric_limits<double>::max();

template <class E>
json optional_name(const std::optional<E>& v) {
  return v ? json(trnsim::to_string(*v)) : json(nullptr);
}
template <class T>
json optional_value(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

workload::TrainingSpec parse_training(ObjectReader r) {
  r.documentation();
  workload::TrainingSpec t;
  t.seq_len = r.integer("seq_len", 1);
  t.global_batch = r.integer("global_batch", 1);
  t.micro_batch = r.optional_integer("micro_batch", 1, 1 << 20);
  t.precision = r.optional_choice<workload::Precision>("dtype").value_or(workload::Precision::Bf16);
  t.optimizer = r.optional_choice<workload::Optimizer>("optimizer").value_or(workload::Optimizer::AdamW);
  // PyTorch DDP's default bucket, 25 MB (torch.nn.parallel.DistributedDataParallel bucket_cap_mb).
  t.gradient_bucket_bytes = r.number_or("gradient_bucket_MB", 25, 1e-6, kInf) * kMB;
  t.attention = r.optional_choice<hw::AttentionKernel>("attention");
  r.finish();
  return t;
}

workload::ParallelismSpec parse_parallelism(ObjectReader r) {
  r.documentation();
  workload::ParallelismSpec p;
  // Parallel degrees up to 2^20 each, so that their products stay far inside int64.
  constexpr std::int64_t kMaxDegree = 1 << 20;
  p.tp = r.integer_or("tp", 1, 1, kMaxDegree);
  p.pp = r.integer_or("pp", 1, 1, kMaxDegree);
  p.dp = r.integer("dp", 1, kMaxDegree);
  p.sequence_parallel = r.optional_boolean("sequence_parallel");
  if (const auto zero = r.optional_integer("zero", 0)) {
    if (*zero > 1) r.fail_at("zero", fmt::format("expected 0 or 1 (ZeRO-1), found {}", *zero));
    p.zero = static_cast<int>(*zero);
  }
  p.schedule = r.optional_choice<workload::PipelineSchedule>("schedule");
  p.virtual_stages = r.optional_integer("virtual_stages", 1, kMaxDegree);
  p.recompute = r.optional_choice<workload::Recompute>("recompute");
  p.rank_order = r.string_or("rank_order", p.rank_order);  // checked with the plan (workload::check_plan)
  r.finish();
  return p;
}

NetworkOptions parse_network(ObjectReader r) {
  r.documentation();
  NetworkOptions n;
  n.model = static_cast<NetworkModelKind>(
      r.optional_choice("model", names_of<NetworkModelKind>()).value_or(0));
  // The algorithm names belong to the net layer; checked here so that a bad name names its file.
  n.algorithm = r.string_or("algorithm", n.algorithm);
  try {
    (void)net::parse_algorithm(n.algorithm);
  } catch (const trnsim::InputError& e) {
    r.fail_at("algorithm", e.what());
  }
  r.finish();
  return n;
}

Measured parse_measured(ObjectReader r) {
  Measured m;
  m.step_time_s = r.number("step_time_s", 0, kInf);
  if (m.step_time_s <= 0)
    r.fail_at("step_time_s", fmt::format("expected a measured step time > 0 seconds, found {}", m.step_time_s));
  m.published = r.string_or("published", "");
  m.derivation = r.string_or("derivation", "");
  m.unpublished = r.string_or("unpublished", "");
  m.note = r.string_or("note", "");
  r.finish();
  return m;
}

json to_json(const workload::TrainingSpec& t) {
  return json{{"seq_len", t.seq_len},
              {"global_batch", t.global_batch},
              {"micro_batch", optional_value(t.micro_batch)},
              {"dtype", trnsim::to_string(t.precision)},
              {"optimizer", trnsim::to_string(t.optimizer)},
              {"gradient_bucket_MB", t.gradient_bucket_bytes / kMB},
              {"attention", optional_name(t.attention)}};
}

json to_json(const workload::ParallelismSpec& p) {
  return json{{"tp", p.tp},
              {"pp", p.pp},
              {"dp", p.dp},
              {"sequence_parallel", optional_value(p.sequence_parallel)},
              {"zero", optional_value(p.zero)},
              {"schedule", optional_name(p.schedule)},
              {"virtual_stages", optional_value(p.virtual_stages)},
              {"recompute", optional_name(p.recompute)},
              {"rank_order", p.rank_order}};
}

json to_json(const NetworkOptions& n) {
  return json{{"model", to_string(n.model)}, {"algorithm", n.algorithm}};
}

json to_json(const Measured& m) {
  json j{{"step_time_s", m.step_time_s}};
  // Only the strings the file gave: an empty one was not written.
  for (const auto& [key, text] : {std::pair{"published", &m.published}, {"derivation", &m.derivation},
                                  {"unpublished", &m.unpublished}, {"note", &m.note}})
    if (!text->empty()) j[key] = *text;
  return j;
}

}  // namespace trnsim::config::detail
