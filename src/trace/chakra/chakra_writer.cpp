// write_chakra: a StepGraph as Chakra per-rank files (contract in trnsim/trace/chakra.hpp).
#include <algorithm>
#include <cmath>
#include <ostream>
#include <utility>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "chakra_et.pb.h"
#include "trnsim/error.hpp"
#include "trnsim/trace/chakra.hpp"

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes
namespace {

namespace pb = trnsim::chakra;

void add_int(pb::Node& n, const char* name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void add_uint(pb::Node& n, const char* name, std::uint64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}

pb::CollectiveCommType comm_type(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return pb::ALL_REDUCE;
    case CollectiveOp::ReduceScatter: return pb::REDUCE_SCATTER;
    case CollectiveOp::AllGather: return pb::ALL_GATHER;
    case CollectiveOp::AllToAll: return pb::ALL_TO_ALL;
    case CollectiveOp::Broadcast: return pb::BROADCAST;
    case CollectiveOp::SendRecv: break;  // a ring step: a send and a recv node (ring_step_nodes)
  }
  throw InternalError("chakra export: a send-recv call reached the collective writer");
}

void add_category(pb::Node& n, Category c) {
  auto* a = n.add_attr();
  a->set_name("trnsim_category");
  a->set_string_val(std::string(to_string(c)));
}

// A ring step of context parallelism (a send-recv call on the pair [sender, receiver]) as Chakra
// says it: a COMM_SEND_NODE on the sender, in the call's place, and a COMM_RECV_NODE on the
// receiver (ring_step_recvs), matched by comm_tag = the send's node id.
void ring_send(pb::Node& n, const TraceNode& t, const StepGraph& g) {
  const GroupSet& pair = g.group_sets.at(t.group);
  n.set_type(pb::COMM_SEND_NODE);
  add_int(n, "comm_src", -1);
  add_int(n, "comm_dst", pair.group(0)[1]);
  add_int(n, "comm_tag", static_cast<std::int64_t>(t.id));
  add_int(n, "comm_size", std::llround(t.bytes));
  auto* pg = n.add_attr();
  pg->set_name("pg_name");
  pg->set_string_val(std::to_string(t.group));
}

pb::Node chakra_node(const TraceNode& t, const StepGraph& g) {
  pb::Node n;
  n.set_id(t.id);
  n.set_name(t.kind == NodeKind::Compute ? g.works[t.work].name : t.name.empty() ? std::string(to_string(t.kind)) : t.name);
  for (std::uint64_t d : t.deps) n.add_data_deps(d);
  switch (t.kind) {
    case NodeKind::Compute: {
      n.set_type(pb::COMP_NODE);
      const Work& w = g.works[t.work];
      if (w.measured_s >= 0) {
        n.set_duration_micros(static_cast<std::uint64_t>(std::llround(w.measured_s * 1e6)));
        break;
      }
      double flops = 0, bytes = 0;
      for (const cost::Kernel& k : w.kernels) {
        flops += k.flops;
        bytes += k.hbm_bytes;
      }
      add_int(n, "num_ops", std::llround(flops));
      add_uint(n, "tensor_size", static_cast<std::uint64_t>(std::llround(bytes)));
      break;
    }
    case NodeKind::Collective: {
      add_category(n, t.category);
      if (t.op == CollectiveOp::SendRecv) {
        ring_send(n, t, g);
        break;
      }
      n.set_type(pb::COMM_COLL_NODE);
      add_int(n, "comm_type", comm_type(t.op));
      add_int(n, "comm_size", std::llround(t.bytes));
      auto* pg = n.add_attr();
      pg->set_name("pg_name");
      pg->set_string_val(std::to_string(t.group));
      break;
    }
    case NodeKind::Send:
    case NodeKind::Recv: {
      const bool send = t.kind == NodeKind::Send;
      n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
      add_int(n, "comm_src", send ? -1 : t.peer);
      add_int(n, "comm_dst", send ? t.peer : -1);
      add_int(n, "comm_tag", t.tag);
      add_int(n, "comm_size", std::llround(t.bytes));
      if (t.category == Category::CpComm) {  // a ring step's receiving half (ring_step_recvs)
        add_category(n, t.category);
        auto* pg = n.add_attr();
        pg->set_name("pg_name");
        pg->set_string_val(std::to_string(t.group));
      }
      break;
    }
  }
  return n;
}

// The receiving half of every ring step: a recv node on the pair's receiver, with an id past
// every node's, nothing depending on it (what the receiver does next waits for its own ring step,
// as in the StepGraph), appended in ascending (sender rank, send id) order.
void ring_step_recvs(std::vector<TraceRank>& ranks, const StepGraph& g) {
  std::uint64_t next = 0;
  for (const TraceRank& r : ranks)
    for (const TraceNode& t : r.nodes) next = std::max(next, t.id + 1);
  std::vector<std::pair<std::int32_t, TraceNode>> recvs;  // (receiver, node)
  for (const TraceRank& r : ranks) {
    for (const TraceNode& t : r.nodes) {
      if (t.kind != NodeKind::Collective || t.op != CollectiveOp::SendRecv) continue;
      TraceNode recv;
      recv.id = next++;
      recv.name = t.name;
      recv.kind = NodeKind::Recv;
      recv.category = t.category;
      recv.peer = r.rank;
      recv.tag = static_cast<std::int64_t>(t.id);
      recv.bytes = t.bytes;
      recv.group = t.group;
      recvs.emplace_back(g.group_sets.at(t.group).group(0)[1], std::move(recv));
    }
  }
  for (auto& [receiver, recv] : recvs) ranks.at(static_cast<std::size_t>(receiver)).nodes.push_back(std::move(recv));
}

void write_message(std::ostream& out, const google::protobuf::Message& m, ChakraEncoding e) {
  if (e == ChakraEncoding::Json) {
    std::string text;
    google::protobuf::util::MessageToJsonString(m, &text);
    out << text << "\n";
    return;
  }
  std::string bytes;
  m.SerializeToString(&bytes);
  auto length = static_cast<std::uint64_t>(bytes.size());
  do {  // base-128 varint, low group first
    const auto byte = static_cast<char>((length & 0x7f) | (length > 0x7f ? 0x80 : 0));
    out.put(byte);
    length >>= 7;
  } while (length > 0);
  out << bytes;
}

}  // namespace

std::vector<std::string> write_chakra(const std::string& prefix, const StepGraph& g, ChakraEncoding encoding,
                                      const ChakraSink& sink) {
  if (static_cast<std::int32_t>(g.simulated_ranks.size()) != g.total_ranks)
    throw InputError(fmt::format("{}: Chakra has a file per rank and no replicas, but this step simulates {} of {} ranks (export it "
                                 "with --all-ranks)",
                                 prefix, g.simulated_ranks.size(), g.total_ranks));
  for (const GroupSet& set : g.group_sets)
    if (set.count() != 1)
      throw InputError(fmt::format("{}: a collective runs on {} replica groups at once, which Chakra cannot say (export it with --all-ranks)",
                                   prefix, set.count()));
  std::vector<std::string> files;
  const std::string ext = encoding == ChakraEncoding::Binary ? ".et" : ".json";
  std::vector<TraceRank> ranks = trace_ranks(g);
  ring_step_recvs(ranks, g);
  for (const TraceRank& r : ranks) {
    files.push_back(fmt::format("{}.{}{}", prefix, r.rank, ext));
    sink(files.back(), [&](std::ostream& out) {
      pb::GlobalMetadata meta;
      meta.set_version("0.0.4");
      auto* writer = meta.add_attr();
      writer->set_name("writer");
      writer->set_string_val("trnsim export-trace");
      write_message(out, meta, encoding);
      for (const TraceNode& t : r.nodes) write_message(out, chakra_node(t, g), encoding);
    });
  }
  nlohmann::json groups = nlohmann::json::object();
  for (std::size_t i = 0; i < g.group_sets.size(); ++i) groups[std::to_string(i)] = g.group_sets[i].ranks;
  files.push_back(prefix + ".groups.json");
  sink(files.back(), [&](std::ostream& out) { out << groups.dump() << "\n"; });
  return files;
}

}  // namespace trnsim::trace
