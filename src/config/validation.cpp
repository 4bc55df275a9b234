// Checks across the objects of an experiment: the parallel plan against the model and the
// cluster, the batch against the plan. Each object's own checks live with its parser.
#include <fmt/core.h>

#include "json_reader.hpp"
#include "resolve.hpp"

namespace trnsim::config::detail {

void validate(const Experiment& ex, const std::string& file) {
  const workload::ModelSpec& m = ex.model;
  const workload::ParallelismSpec& p = ex.parallelism;
  const workload::TrainingSpec& t = ex.training;

  // Megatron-style TP splits attention heads; KV heads are split too, or replicated when TP
  // exceeds them (GQA), which needs TP to be a multiple of kv_heads.
  if (m.heads % p.tp != 0)
    fail(file, "/parallelism/tp", fmt::format("{} does not divide heads ({})", p.tp, m.heads));
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    fail(file, "/parallelism/tp",
         fmt::format("{} neither divides kv_heads ({}) nor is a multiple of it", p.tp, m.kv_heads));
  if (m.ffn_hidden % p.tp != 0)
    fail(file, "/parallelism/tp", fmt::format("{} does not divide ffn_hidden ({})", p.tp, m.ffn_hidden));

  const std::int64_t ranks = ex.cluster.ranks();
  if (p.tp * p.pp * p.dp != ranks)
    fail(file, "/parallelism",
         fmt::format("tp x pp x dp = {} x {} x {} = {} does not match the cluster's ranks ({} = {} {} x {} "
                     "ranks each)",
                     p.tp, p.pp, p.dp, p.tp * p.pp * p.dp, ranks, ex.cluster.instances,
                     ex.cluster.instance.name, ex.cluster.instance.ranks()));

  if (p.pp > m.layers)
    fail(file, "/parallelism/pp", fmt::format("{} pipeline stages exceed layers ({})", p.pp, m.layers));
  if (p.virtual_stages) {
    const std::int64_t chunks = p.pp * *p.virtual_stages;
    // Chunks may differ by one layer (workload/plan.hpp's split rule) but none may be empty.
    if (chunks > m.layers)
      fail(file, "/parallelism/virtual_stages",
           fmt::format("pp x virtual_stages = {} x {} = {} model chunks exceed layers ({}): every chunk needs a "
                       "layer",
                       p.pp, *p.virtual_stages, chunks, m.layers));
    if (*p.virtual_stages > 1 && p.schedule && *p.schedule != workload::PipelineSchedule::Interleaved)
      fail(file, "/parallelism/schedule",
           fmt::format("virtual_stages {} needs schedule \"1f1b-interleaved\"", *p.virtual_stages));
  }

  const std::int64_t per_step = p.dp * t.micro_batch.value_or(1);
  if (t.global_batch % per_step != 0)
    fail(file, "/training/global_batch",
         t.micro_batch ? fmt::format("{} is not divisible by dp x micro_batch = {} x {} = {}", t.global_batch,
                                     p.dp, *t.micro_batch, per_step)
                       : fmt::format("{} is not divisible by dp ({})", t.global_batch, p.dp));

  if (m.learned_positions && m.max_positions > 0 && t.seq_len > m.max_positions)
    fail(file, "/training/seq_len",
         fmt::format("{} exceeds the model's learned position table (max_positions {})", t.seq_len,
                     m.max_positions));
}

}  // namespace trnsim::config::detail
