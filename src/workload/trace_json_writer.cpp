// write_trace_json: a StepGraph in trnsim's JSON trace format (traces/README.md). Written with fmt
// line by line rather than through a JSON tree: a million-node trace stays a stream. Doubles are
// written in their shortest round-trip form, so a replay of the file prices the same numbers.
#include <ostream>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/workload/trace.hpp"

namespace trnsim::workload {
namespace {

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

void write_kernel(std::ostream& out, const cost::Kernel& k) {
  out << fmt::format(R"({{"name":{},"op":"{}")", quoted(k.name), to_string(k.op));
  if (k.batch > 0) {
    out << fmt::format(R"(,"m":{},"n":{},"k":{},"batch":{})", k.m, k.n, k.k, k.batch);
    if (k.causal != cost::CausalDim::None) out << fmt::format(R"(,"causal":"{}")", k.causal == cost::CausalDim::N ? "n" : "k");
  }
  if (k.flops != 0) out << fmt::format(R"(,"flops":{})", k.flops);
  if (k.vector_elements != 0) out << fmt::format(R"(,"vector_elements":{})", k.vector_elements);
  if (k.scalar_elements != 0) out << fmt::format(R"(,"scalar_elements":{})", k.scalar_elements);
  if (k.hbm_bytes != 0) out << fmt::format(R"(,"hbm_bytes":{})", k.hbm_bytes);
  if (!k.low_precision) out << R"(,"low_precision":false)";
  if (k.element_bytes != 2) out << fmt::format(R"(,"element_bytes":{})", k.element_bytes);
  if (k.fused_epilogue) out << R"(,"fused_epilogue":true)";
  out << "}";
}

void write_work(std::ostream& out, const Work& w) {
  out << fmt::format(R"({{"name":{})", quoted(w.name));
  if (w.measured_s >= 0) {
    out << fmt::format(R"(,"duration_us":{}}})", w.measured_s * 1e6);
    return;
  }
  out << R"(,"kernels":[)";
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    if (i > 0) out << ",";
    write_kernel(out, w.kernels[i]);
  }
  out << "]}";
}

void write_int_list(std::ostream& out, const std::vector<std::int32_t>& v) {
  out << "[" << fmt::format("{}", fmt::join(v, ",")) << "]";
}

}  // namespace

void write_trace_json(std::ostream& out, const StepGraph& g, const TraceMeta& meta) {
  const auto n_tasks = static_cast<std::uint64_t>(g.tasks.size());
  // Predecessors in the order the graph lists successors, and each transfer's recv node id.
  std::vector<std::vector<TaskId>> preds(g.tasks.size());
  for (TaskId t = 0; t < g.tasks.size(); ++t)
    for (std::uint32_t e = g.tasks[t].succ_begin; e < g.tasks[t].succ_end; ++e) preds[g.successors[e]].push_back(t);
  std::vector<std::uint64_t> recv_id(g.tasks.size(), 0);
  std::uint64_t next_recv = n_tasks;
  for (TaskId t = 0; t < g.tasks.size(); ++t)
    if (g.tasks[t].kind == TaskKind::Transfer) recv_id[t] = next_recv++;

  out << fmt::format(R"({{"format":"trnsim-trace","version":{},)", kTraceFormatVersion) << "\n";
  out << fmt::format(R"("cluster":{{"instance":{},"count":{}}},"dtype":"{}","total_ranks":{},)", quoted(meta.cluster_instance),
                     meta.cluster_count, to_string(meta.dtype), g.total_ranks)
      << "\n";
  if (!meta.source.is_null()) out << R"("source":)" << meta.source.dump() << ",\n";
  out << R"("groups":[)";
  for (std::size_t i = 0; i < g.group_sets.size(); ++i) {
    out << (i > 0 ? ",\n" : "\n") << fmt::format(R"({{"size":{},"ranks":)", g.group_sets[i].group_size);
    write_int_list(out, g.group_sets[i].ranks);
    out << "}";
  }
  out << "],\n" << R"("pairs":[)";
  for (std::size_t i = 0; i < g.replica_sets.size(); ++i) {
    out << (i > 0 ? ",\n" : "\n") << "[";
    for (std::size_t p = 0; p < g.replica_sets[i].size(); ++p)
      out << (p > 0 ? "," : "") << fmt::format("[{},{}]", g.replica_sets[i][p].first, g.replica_sets[i][p].second);
    out << "]";
  }
  out << "],\n" << R"("works":[)";
  for (std::size_t i = 0; i < g.works.size(); ++i) {
    out << (i > 0 ? ",\n" : "\n");
    write_work(out, g.works[i]);
  }
  out << "],\n" << R"("ranks":[)";

  // Per simulated rank: its tasks (ascending id), then the recv nodes of transfers to it.
  std::vector<std::vector<TaskId>> by_rank(g.simulated_ranks.size());
  std::vector<std::vector<TaskId>> recvs(g.simulated_ranks.size());
  std::vector<std::int32_t> stage(g.simulated_ranks.size(), 0);
  for (TaskId t = 0; t < g.tasks.size(); ++t) {
    const Task& task = g.tasks[t];
    const std::size_t slot = g.rank_slot(task.rank);
    by_rank[slot].push_back(t);
    stage[slot] = task.stage;
    if (task.kind == TaskKind::Transfer) recvs[g.rank_slot(task.peer)].push_back(t);
  }
  for (std::size_t s = 0; s < g.simulated_ranks.size(); ++s) {
    const std::int32_t rank = g.simulated_ranks[s];
    out << (s > 0 ? ",\n" : "\n") << fmt::format(R"({{"rank":{},"stage":{},"nodes":[)", rank, stage[s]);
    bool first = true;
    auto deps = [&](TaskId t) {
      std::string d;
      for (TaskId p : preds[t]) {
        const Task& pt = g.tasks[p];
        std::uint64_t id = p;
        if (pt.rank != rank) {
          if (pt.kind != TaskKind::Transfer || pt.peer != rank)
            throw InternalError(fmt::format("trace export: task {} on rank {} waits for task {} on rank {} without a transfer",
                                            t, rank, p, pt.rank));
          id = recv_id[p];
        }
        d += fmt::format("{}{}", d.empty() ? "" : ",", id);
      }
      return d;
    };
    for (TaskId t : by_rank[s]) {
      const Task& task = g.tasks[t];
      out << (first ? "\n" : ",\n");
      first = false;
      out << fmt::format(R"({{"id":{},)", t);
      switch (task.kind) {
        case TaskKind::Compute:
          out << fmt::format(R"("kind":"compute","work":{},"category":"{}")", task.index, to_string(task.category));
          break;
        case TaskKind::Collective: {
          const Collective& c = g.collectives[task.index];
          const Category expected = task.stream == Stream::DpComm ? Category::DpComm : Category::TpComm;
          if (task.category != expected)
            throw InternalError(fmt::format("trace export: collective task {} of category {} on another stream", t,
                                            to_string(task.category)));
          out << fmt::format(R"("kind":"collective","op":"{}","bytes":{},"group":{},"category":"{}")", to_string(c.op), c.bytes,
                             c.group_set, to_string(task.category));
          break;
        }
        case TaskKind::Transfer:
          out << fmt::format(R"("kind":"send","peer":{},"tag":{},"bytes":{})", task.peer, t, task.bytes);
          if (task.index < g.replica_sets.size()) out << fmt::format(R"(,"pairs":{})", task.index);
          break;
      }
      if (task.layer >= 0) out << fmt::format(R"(,"layer":{})", task.layer);
      if (task.micro_batch >= 0) out << fmt::format(R"(,"micro_batch":{})", task.micro_batch);
      out << R"(,"deps":[)" << deps(t) << "]}";
    }
    for (TaskId t : recvs[s]) {
      const Task& task = g.tasks[t];
      out << (first ? "\n" : ",\n");
      first = false;
      out << fmt::format(R"({{"id":{},"kind":"recv","peer":{},"tag":{},"bytes":{},"deps":[]}})", recv_id[t], task.rank, t,
                         task.bytes);
    }
    out << "]}";
  }
  out << "]}\n";
}

}  // namespace trnsim::workload
