#pragma once
// Chakra execution traces (MLCommons; format summarised in shared/data/chakra.md): one file per
// rank, PREFIX.<rank>.et (protobuf messages, each preceded by its length as a base-128 varint: a
// GlobalMetadata, then Nodes) or PREFIX.<rank>.json (the same messages as JSON objects back to
// back), and an optional communicator-group file PREFIX.groups.json ({"NAME": [ranks], ...}).
//
// What trnsim reads (traces/README.md, "Chakra"):
// - COMP_NODE: num_ops (FLOPs) and tensor_size (HBM bytes), priced on the replay's chip; else
//   duration_micros, a measured time. is_cpu_op nodes, METADATA, MEM_LOAD, MEM_STORE and
//   INVALID nodes are ignored: replayed as taking no time (their dependencies kept), and listed.
// - COMM_COLL_NODE: comm_type (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, BROADCAST;
//   any other type is an error naming the node), comm_size (int64 or uint64 bytes), pg_name (a
//   group of the group file; without one, or without a group file, all ranks).
// - COMM_SEND_NODE / COMM_RECV_NODE: comm_dst / comm_src, comm_tag, comm_size.
// - trnsim_category (trnsim's own attribute, written by write_chakra): a collective's category
//   (dp_comm runs on the DP stream); on a send, cp_comm makes it a ring step of context
//   parallelism (a send-recv call on its pg_name group), and a cp_comm recv, its receiving half,
//   is dropped (traces/README.md, "Chakra").
// - data_deps order the nodes; ctrl_deps (the call-stack parent) do not.
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "trnsim/trace/trace.hpp"

namespace trnsim::trace {

enum class ChakraEncoding : std::uint8_t { Binary, Json };

// Contract: the ranks' files PREFIX.0.ext, PREFIX.1.ext, ... up to the first missing one, and the
// group file if present; InputError naming the file, the message (its index and byte offset) and
// the node for a truncated file, a malformed length varint, a message that does not parse, an
// unsupported collective type or a missing attribute. O(file bytes + nodes log nodes).
TraceDocument read_chakra(const std::string& prefix, ChakraEncoding encoding);

// A file's name (for messages) and its bytes.
struct ChakraFile {
  std::string path;
  std::string bytes;
};

// Contract: read_chakra on files already in memory (what read_chakra does once it has read them;
// the fuzz harness feeds it directly): `ranks[r]` is rank r's file, `groups` the group file (none
// when its path is empty); the same InputErrors, naming each file's `path`; at least one rank.
TraceDocument parse_chakra(const std::string& prefix, const std::vector<ChakraFile>& ranks, const ChakraFile& groups,
                           ChakraEncoding encoding);

// Receives each file the writer produces: its path and a function that writes its bytes to a stream.
// The trace layer writes no file itself: the caller decides how (the CLI: atomically, cli::write_file).
using ChakraSink = std::function<void(const std::string& path, const std::function<void(std::ostream&)>& write)>;

// Contract: hands `sink` PREFIX.<rank>.et (or .json) for every rank, in ascending rank, then
// PREFIX.groups.json; returns those paths. Compute nodes carry num_ops = the work's FLOPs and tensor_size = its HBM bytes
// (matmul shapes and vector/scalar work have no Chakra attribute: they are lost), or
// duration_micros for a measured work. Throws InputError unless every rank has its own nodes
// (a symmetric graph's replicas have no Chakra form: export with --all-ranks).
std::vector<std::string> write_chakra(const std::string& prefix, const StepGraph& graph, ChakraEncoding encoding,
                                      const ChakraSink& sink);

}  // namespace trnsim::trace
