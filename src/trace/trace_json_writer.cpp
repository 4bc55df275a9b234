// write_trace_json: a StepGraph in trnsim's JSON trace format (traces/README.md). Written with fmt
// line by line rather than through a JSON tree: a million-node trace stays a stream. Doubles are
// written in their shortest round-trip form, so a replay of the file prices the same numbers.
#include <ostream>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/trace/trace.hpp"

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes
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
  if (k.transpose) out << R"(,"transpose":true)";
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

std::vector<TraceRank> trace_ranks(const StepGraph& g) {
  const auto n_tasks = static_cast<std::uint64_t>(g.tasks.size());
  // Predecessors in the order the graph lists successors, and each transfer's recv node id.
  std::vector<std::vector<TaskId>> preds(g.tasks.size());
  for (TaskId t = 0; t < g.tasks.size(); ++t)
    for (std::uint32_t e = g.tasks[t].succ_begin; e < g.tasks[t].succ_end; ++e) preds[g.successors[e]].push_back(t);
  std::vector<std::uint64_t> recv_id(g.tasks.size(), 0);
  std::uint64_t next_recv = n_tasks;
  for (TaskId t = 0; t < g.tasks.size(); ++t)
    if (g.tasks[t].kind == TaskKind::Transfer) recv_id[t] = next_recv++;

  std::vector<TraceRank> ranks(g.simulated_ranks.size());
  for (std::size_t s = 0; s < ranks.size(); ++s) ranks[s].rank = g.simulated_ranks[s];
  std::vector<std::vector<TaskId>> recvs(g.simulated_ranks.size());
  for (TaskId t = 0; t < g.tasks.size(); ++t) {
    const Task& task = g.tasks[t];
    const std::size_t slot = g.rank_slot(task.rank);
    TraceRank& r = ranks[slot];
    r.stage = task.stage;
    if (task.kind == TaskKind::Transfer) recvs[g.rank_slot(task.peer)].push_back(t);
    TraceNode n;
    n.id = t;
    n.category = task.category;
    n.layer = task.layer;
    n.micro_batch = task.micro_batch;
    switch (task.kind) {
      case TaskKind::Compute:
        n.kind = NodeKind::Compute;
        n.work = task.index;
        break;
      case TaskKind::Collective: {
        const Collective& c = g.collectives[task.index];
        // The stream follows from the category (trace_build.cpp): EP all-to-alls and CP exchanges share
        // the TP stream.
        const bool on_dp = task.stream == Stream::DpComm;
        if (on_dp != (task.category == Category::DpComm) ||
            (!on_dp && task.category != Category::TpComm && task.category != Category::EpComm &&
             task.category != Category::CpComm))
          throw InternalError(fmt::format("trace export: collective task {} of category {} on another stream", t,
                                          to_string(task.category)));
        n.kind = NodeKind::Collective;
        n.op = c.op;
        n.bytes = c.bytes;
        n.group = c.group_set;
        break;
      }
      case TaskKind::Transfer:
        n.kind = NodeKind::Send;
        n.peer = task.peer;
        n.tag = static_cast<std::int64_t>(t);
        n.bytes = task.bytes;
        n.pairs = task.index < g.replica_sets.size() ? task.index : kNoIndex;
        break;
    }
    for (TaskId p : preds[t]) {
      const Task& pt = g.tasks[p];
      if (pt.rank == task.rank) {
        n.deps.push_back(p);
      } else if (pt.kind == TaskKind::Transfer && pt.peer == task.rank) {
        n.deps.push_back(recv_id[p]);
      } else {
        throw InternalError(fmt::format("trace export: task {} on rank {} waits for task {} on rank {} without a transfer", t,
                                        task.rank, p, pt.rank));
      }
    }
    r.nodes.push_back(std::move(n));
  }
  for (std::size_t s = 0; s < ranks.size(); ++s)
    for (TaskId t : recvs[s]) {
      TraceNode n;
      n.id = recv_id[t];
      n.kind = NodeKind::Recv;
      n.category = Category::PpComm;
      n.peer = g.tasks[t].rank;
      n.tag = static_cast<std::int64_t>(t);
      n.bytes = g.tasks[t].bytes;
      ranks[s].nodes.push_back(std::move(n));
    }
  return ranks;
}

void write_trace_json(std::ostream& out, const StepGraph& g, const TraceMeta& meta) {
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
  const std::vector<TraceRank> ranks = trace_ranks(g);
  for (std::size_t s = 0; s < ranks.size(); ++s) {
    out << (s > 0 ? ",\n" : "\n") << fmt::format(R"({{"rank":{},"stage":{},"nodes":[)", ranks[s].rank, ranks[s].stage);
    for (std::size_t i = 0; i < ranks[s].nodes.size(); ++i) {
      const TraceNode& n = ranks[s].nodes[i];
      out << (i > 0 ? ",\n" : "\n") << fmt::format(R"({{"id":{},"kind":"{}",)", n.id, to_string(n.kind));
      switch (n.kind) {
        case NodeKind::Compute: out << fmt::format(R"("work":{},"category":"{}")", n.work, to_string(n.category)); break;
        case NodeKind::Collective:
          out << fmt::format(R"("op":"{}","bytes":{},"group":{},"category":"{}")", to_string(n.op), n.bytes, n.group,
                             to_string(n.category));
          break;
        case NodeKind::Send:
        case NodeKind::Recv:
          out << fmt::format(R"("peer":{},"tag":{},"bytes":{})", n.peer, n.tag, n.bytes);
          if (n.pairs != kNoIndex) out << fmt::format(R"(,"pairs":{})", n.pairs);
          break;
      }
      if (n.layer >= 0) out << fmt::format(R"(,"layer":{})", n.layer);
      if (n.micro_batch >= 0) out << fmt::format(R"(,"micro_batch":{})", n.micro_batch);
      out << fmt::format(R"(,"deps":[{}]}})", fmt::join(n.deps, ","));
    }
    out << "]}";
  }
  out << "]}\n";
}

}  // namespace trnsim::trace
