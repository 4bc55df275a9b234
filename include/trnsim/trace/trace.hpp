#pragma once
// Execution traces (the trace layer, between workload and replay): a StepGraph read from, or
// written to, a file (traces/README.md has the
// format). Two readers feed one builder: trnsim's own JSON format and Chakra (chakra.hpp). The
// builder checks every trace before it becomes a StepGraph (dependencies on missing nodes,
// unmatched send/recv, collective members that disagree, groups naming ranks that do not exist,
// cycles through Boost.Graph): each failure is an InputError naming the file, the rank and the node.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/workload/specs.hpp"
#include "trnsim/workload/step_graph.hpp"

namespace trnsim::trace {

using workload::Category;
using workload::CollectiveOp;
using workload::GroupSet;
using workload::Precision;
using workload::RankPair;
using workload::StepGraph;
using workload::Work;

inline constexpr int kTraceFormatVersion = 1;
inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

enum class NodeKind : std::uint8_t { Compute, Collective, Send, Recv };
constexpr auto enum_table(NodeKind) {
  using enum NodeKind;
  return std::array{EnumName{Compute, "compute"}, EnumName{Collective, "collective"}, EnumName{Send, "send"},
                    EnumName{Recv, "recv"}};
}

// One node of one rank, as a reader found it (not yet checked).
struct TraceNode {
  std::uint64_t id = 0;            // unique on its rank
  std::string name;
  NodeKind kind = NodeKind::Compute;
  Category category = Category::Forward;
  std::int32_t layer = -1, micro_batch = -1;
  std::uint32_t work = kNoIndex;   // Compute: TraceDocument::works
  CollectiveOp op = CollectiveOp::AllReduce;  // Collective
  double bytes = 0;                // Collective: per-rank size (nccl-tests); Send: bytes moved
  std::uint32_t group = kNoIndex;  // Collective: TraceDocument::groups
  std::int32_t peer = -1;          // Send: destination; Recv: source
  std::int64_t tag = 0;            // Send/Recv: matches a send to its receive with (src, dst)
  std::uint32_t pairs = kNoIndex;  // Send: TraceDocument::pairs (replicas), kNoIndex for none
  std::vector<std::uint64_t> deps; // ids of nodes on the same rank this one waits for

  friend bool operator==(const TraceNode&, const TraceNode&) = default;
};

struct TraceRank {
  std::int32_t rank = 0;
  std::int32_t stage = 0;  // pipeline stage (reports group ranks by it)
  std::vector<TraceNode> nodes;

  friend bool operator==(const TraceRank&, const TraceRank&) = default;
};

// What a reader found, before the checks: the cluster it was recorded on, its groups and nodes.
struct TraceDocument {
  std::string file;                  // for messages
  std::string format;                // "trnsim" or "chakra"
  int version = kTraceFormatVersion;
  std::string cluster_instance;      // the cluster it came from ("" when unknown)
  std::int64_t cluster_count = 0;
  Precision dtype = Precision::Bf16; // matmul rate of FLOP-counted kernels
  nlohmann::json source;             // the experiment's model/training/parallelism/software, or null
  std::int32_t total_ranks = 0;      // real ranks of the job
  std::vector<GroupSet> groups;
  std::vector<std::vector<RankPair>> pairs;  // replica transfers of a send (symmetry)
  std::vector<Work> works;
  std::vector<TraceRank> ranks;
  std::vector<std::string> ignored;  // nodes a reader skipped or rejected: "rank R node ID (NAME): why"
};

// A checked trace: the StepGraph and where each task came from.
struct Trace {
  std::string file, format;
  int version = kTraceFormatVersion;
  std::string cluster_instance;
  std::int64_t cluster_count = 0;
  Precision dtype = Precision::Bf16;
  nlohmann::json source;
  StepGraph graph;
  struct NodeRef {
    std::int32_t rank;
    std::uint64_t id;
  };
  std::vector<NodeRef> task_nodes;   // per task
  std::size_t measured_tasks = 0;    // compute tasks whose time is a measured duration
  std::vector<std::string> ignored;
};

// Contract: the StepGraph of `doc` (tasks in ascending (node id, rank) order; a recv is no task:
// what waits for it waits for the send's transfer and for the recv's own dependencies). Throws
// InputError "FILE: rank R node ID (NAME): ..." for a dependency on a node the rank lacks, an
// unmatched or duplicate send/recv, collective members that disagree on op, size or group or
// whose counts differ, a group naming a rank outside [0, total_ranks) or a node's rank outside
// it, and for a dependency cycle (its nodes listed, Boost.Graph depth-first search).
// O((nodes + deps) log nodes).
Trace build_trace(TraceDocument doc);

// Contract: the TraceDocument of a parsed trnsim JSON trace (no cross-node checks: build_trace
// does those); InputError naming `file`, the JSON path, what was expected and what was found.
TraceDocument parse_trace_json(const nlohmann::json& document, const std::string& file);

// Contract: the TraceDocument of a trnsim JSON trace's text, as parse_trace_json reads it (the
// same document; for bad input the same InputError, "not valid JSON" included) without a DOM of
// the whole text: the streaming reader, or parse_trace_json when that one gives up.
// O(text + nodes + deps); memory about that of the TraceDocument.
TraceDocument parse_trace_json_text(std::string_view text, const std::string& file);

// Contract: the streaming reader alone: nlohmann's SAX parser filling the nodes directly. Empty
// (never an error) when the text is not a trace it reads exactly as parse_trace_json would: any
// error, a key twice, the works after the ranks.
std::optional<TraceDocument> stream_trace_json(std::string_view text, const std::string& file);

// Contract: reads trnsim's JSON trace format (traces/README.md) through parse_trace_json_text;
// InputError naming the file, the JSON path, what was expected and what was found. Then build_trace.
Trace read_trace_json(const std::string& path);
// Contract: a trnsim JSON trace when `path` is a file, else Chakra files PATH.<rank>.et, else
// PATH.<rank>.json (workload/chakra.hpp); then build_trace. InputError when there is none.
Trace read_trace(const std::string& path);

// What a writer records besides the graph.
struct TraceMeta {
  std::string cluster_instance;
  std::int64_t cluster_count = 0;
  Precision dtype = Precision::Bf16;
  nlohmann::json source;  // null: none
};

// Contract: the nodes of each simulated rank of `graph` (ascending rank): its tasks with their
// ids as node ids, a transfer as a send on its rank and a recv (id past the last task) on its
// peer. Throws InternalError for a dependency between ranks other than through a transfer.
std::vector<TraceRank> trace_ranks(const StepGraph& graph);

// Contract: writes `graph` in trnsim's JSON format, deterministic (same graph, same bytes); node
// ids are task ids, a transfer becomes a send on its rank and a recv on its peer. Throws
// InternalError for a dependency between ranks other than through a transfer. O(tasks + edges).
void write_trace_json(std::ostream& out, const StepGraph& graph, const TraceMeta& meta);

}  // namespace trnsim::trace
