// read_trace_json: trnsim's JSON trace format (traces/README.md) into a TraceDocument, then
// build_trace. Every field is checked for its type and range where it is read; unknown keys are
// errors (a misspelt "deps" must not silently drop dependencies).
#include <cmath>
#include <fstream>
#include <initializer_list>

#include <fmt/format.h>

#include "trnsim/error.hpp"
#include "trnsim/trace/trace.hpp"

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes
namespace {

using nlohmann::json;

std::string type_of(const json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  return std::string(j.type_name()) == "null" ? "null" : fmt::format("{} {}", j.is_array() || j.is_object() ? "an" : "a", j.type_name());
}

// A JSON value with its path, for messages.
struct At {
  const std::string& file;
  const json& j;
  std::string path;

  [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
    throw InputError(fmt::format("{}: {}: expected {}, found {}", file, path.empty() ? "/" : path, expected, found));
  }
  At operator[](const char* key) const { return {file, j.at(key), path + "/" + key}; }
  At operator[](std::size_t i) const { return {file, j[i], fmt::format("{}/{}", path, i)}; }
  bool has(const char* key) const { return j.contains(key); }

  void object(std::initializer_list<const char*> keys) const {
    if (!j.is_object()) fail("an object", type_of(j));
    for (const auto& [k, v] : j.items()) {
      bool known = false;
      for (const char* allowed : keys) known |= k == allowed;
      if (!known) fail(fmt::format("one of the keys {}", fmt::join(keys, ", ")), fmt::format("unknown key \"{}\"", k));
    }
  }
  void need(const char* key) const {
    if (!has(key)) fail(fmt::format("the key \"{}\"", key), "none");
  }
  std::size_t array() const {
    if (!j.is_array()) fail("an array", type_of(j));
    return j.size();
  }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const {
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(fmt::format("an integer in [{}, {}]", lo, hi), j.dump());
    if (!j.is_number_integer()) fail(fmt::format("an integer in [{}, {}]", lo, hi), type_of(j));
    const auto v = j.get<std::int64_t>();
    if (v < lo || v > hi) fail(fmt::format("an integer in [{}, {}]", lo, hi), j.dump());
    return v;
  }
  std::uint64_t id() const {
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
      fail("a node id (an integer >= 0)", j.is_number_integer() ? j.dump() : type_of(j));
    return j.get<std::uint64_t>();
  }
  double number(double lo) const {
    if (!j.is_number()) fail(fmt::format("a number >= {}", lo), type_of(j));
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < lo) fail(fmt::format("a finite number >= {}", lo), j.dump());
    return v;
  }
  std::string string() const {
    if (!j.is_string()) fail("a string", type_of(j));
    return j.get<std::string>();
  }
  bool boolean() const {
    if (!j.is_boolean()) fail("true or false", type_of(j));
    return j.get<bool>();
  }
  template <class E>
  E name() const {
    const std::string s = string();
    const auto v = parse_enum<E>(s);
    if (!v) fail(fmt::format("one of {}", fmt::join(enum_names<E>(), ", ")), fmt::format("\"{}\"", s));
    return *v;
  }
};

constexpr std::int64_t kMaxRank = (std::int64_t{1} << 31) - 1;
constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;

cost::Kernel read_kernel(const At& a) {
  a.object({"name", "op", "m", "n", "k", "batch", "causal", "flops", "vector_elements", "scalar_elements", "hbm_bytes",
            "low_precision", "element_bytes", "fused_epilogue"});
  cost::Kernel k;
  if (a.has("name")) k.name = a["name"].string();
  if (a.has("op")) k.op = a["op"].name<cost::OpClass>();
  const bool shaped = a.has("batch") || a.has("m") || a.has("n") || a.has("k");
  if (shaped) {
    for (const char* key : {"m", "n", "k", "batch"}) a.need(key);
    k.m = a["m"].integer(1, kMaxDim);
    k.n = a["n"].integer(1, kMaxDim);
    k.k = a["k"].integer(1, kMaxDim);
    k.batch = a["batch"].integer(1, kMaxDim);
  }
  if (a.has("causal")) {
    const std::string c = a["causal"].string();
    if (c == "n") k.causal = cost::CausalDim::N;
    else if (c == "k") k.causal = cost::CausalDim::K;
    else a["causal"].fail("\"n\" or \"k\"", fmt::format("\"{}\"", c));
    if (!shaped) a["causal"].fail("a matmul shape (m, n, k, batch) with causal", "none");
  }
  if (a.has("flops")) k.flops = a["flops"].number(0);
  if (a.has("vector_elements")) k.vector_elements = a["vector_elements"].number(0);
  if (a.has("scalar_elements")) k.scalar_elements = a["scalar_elements"].number(0);
  if (a.has("hbm_bytes")) k.hbm_bytes = a["hbm_bytes"].number(0);
  if (a.has("low_precision")) k.low_precision = a["low_precision"].boolean();
  if (a.has("element_bytes")) k.element_bytes = a["element_bytes"].number(0);
  if (a.has("fused_epilogue")) k.fused_epilogue = a["fused_epilogue"].boolean();
  return k;
}

Work read_work(const At& a) {
  a.object({"name", "kernels", "duration_us"});
  Work w;
  if (a.has("name")) w.name = a["name"].string();
  if (a.has("kernels") == a.has("duration_us")) a.fail("either \"kernels\" or \"duration_us\"", a.has("kernels") ? "both" : "neither");
  if (a.has("duration_us")) {
    w.measured_s = a["duration_us"].number(0) * 1e-6;
    return w;
  }
  const At ks = a["kernels"];
  const std::size_t n = ks.array();
  w.kernels.reserve(n);
  for (std::size_t i = 0; i < n; ++i) w.kernels.push_back(read_kernel(ks[i]));
  return w;
}

TraceNode read_node(const At& a, TraceDocument& doc) {
  a.object({"id", "name", "kind", "category", "layer", "micro_batch", "work", "op", "bytes", "group", "peer", "tag", "pairs", "deps"});
  TraceNode n;
  a.need("id");
  a.need("kind");
  n.id = a["id"].id();
  if (a.has("name")) n.name = a["name"].string();
  n.kind = a["kind"].name<NodeKind>();
  if (a.has("layer")) n.layer = static_cast<std::int32_t>(a["layer"].integer(-1, kMaxRank));
  if (a.has("micro_batch")) n.micro_batch = static_cast<std::int32_t>(a["micro_batch"].integer(-1, kMaxRank));
  auto only = [&](std::initializer_list<const char*> keys, const char* kinds) {
    for (const char* k : keys)
      if (a.has(k)) a[k].fail(fmt::format("no \"{}\" on a {} node (only on {})", k, to_string(n.kind), kinds), "one");
  };
  switch (n.kind) {
    case NodeKind::Compute:
      only({"op", "bytes", "group", "peer", "tag", "pairs"}, "other kinds");
      a.need("work");
      if (a["work"].j.is_object()) {
        n.work = static_cast<std::uint32_t>(doc.works.size());
        doc.works.push_back(read_work(a["work"]));
      } else {
        n.work = static_cast<std::uint32_t>(a["work"].integer(0, kMaxRank));
        if (n.work >= doc.works.size())
          a["work"].fail(fmt::format("an index into /works (0 to {}) or a work object", static_cast<std::int64_t>(doc.works.size()) - 1),
                         a["work"].j.dump());
      }
      if (n.name.empty()) n.name = doc.works[n.work].name;
      n.category = a.has("category") ? a["category"].name<Category>() : Category::Forward;
      if (n.category == Category::TpComm || n.category == Category::DpComm || n.category == Category::PpComm ||
          n.category == Category::EpComm || n.category == Category::CpComm)
        a["category"].fail("forward, backward, recompute or optimizer on a compute node", std::string(to_string(n.category)));
      break;
    case NodeKind::Collective:
      only({"work", "peer", "tag", "pairs"}, "compute, send or recv nodes");
      for (const char* k : {"op", "bytes", "group"}) a.need(k);
      n.op = a["op"].name<CollectiveOp>();
      n.bytes = a["bytes"].number(0);
      n.group = static_cast<std::uint32_t>(a["group"].integer(0, kMaxRank));
      n.category = a.has("category") ? a["category"].name<Category>() : Category::TpComm;
      if (n.category != Category::TpComm && n.category != Category::DpComm && n.category != Category::EpComm &&
          n.category != Category::CpComm)
        a["category"].fail("tp_comm, dp_comm, ep_comm or cp_comm on a collective node", std::string(to_string(n.category)));
      // A ring step of context parallelism: every pair of its group (sender, receiver) at once.
      if (n.op == CollectiveOp::SendRecv && n.category != Category::CpComm)
        a["op"].fail("a collective (send-recv is a send node and a recv node, or a cp_comm ring step)", "\"send-recv\"");
      break;
    case NodeKind::Send:
    case NodeKind::Recv:
      only({"work", "op", "group", "category"}, "compute or collective nodes");
      for (const char* k : {"peer", "tag"}) a.need(k);
      if (n.kind == NodeKind::Send) a.need("bytes");
      n.peer = static_cast<std::int32_t>(a["peer"].integer(0, kMaxRank));
      n.tag = a["tag"].integer(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
      if (a.has("bytes")) n.bytes = a["bytes"].number(0);
      if (a.has("pairs")) {
        if (n.kind == NodeKind::Recv) a["pairs"].fail("no \"pairs\" on a recv node (the send lists them)", "one");
        n.pairs = static_cast<std::uint32_t>(a["pairs"].integer(0, kMaxRank));
      }
      n.category = Category::PpComm;
      break;
  }
  if (a.has("deps")) {
    const At d = a["deps"];
    const std::size_t count = d.array();
    n.deps.reserve(count);
    for (std::size_t i = 0; i < count; ++i) n.deps.push_back(d[i].id());
  }
  return n;
}

}  // namespace

TraceDocument parse_trace_json(const json& j, const std::string& file) {
  const At root{file, j, ""};
  root.object({"format", "version", "cluster", "dtype", "total_ranks", "source", "groups", "pairs", "works", "ranks", "name", "note"});
  TraceDocument doc;
  doc.file = file;
  doc.format = "trnsim";
  for (const char* k : {"format", "version", "total_ranks", "ranks"}) root.need(k);
  if (root["format"].string() != "trnsim-trace") root["format"].fail("\"trnsim-trace\"", root["format"].j.dump());
  doc.version = static_cast<int>(root["version"].integer(1, 1000));
  if (doc.version != kTraceFormatVersion)
    root["version"].fail(fmt::format("format version {} (this trnsim reads version {})", kTraceFormatVersion, kTraceFormatVersion),
                         std::to_string(doc.version));
  if (root.has("cluster")) {
    const At c = root["cluster"];
    c.object({"instance", "count"});
    if (c.has("instance")) doc.cluster_instance = c["instance"].string();
    if (c.has("count")) doc.cluster_count = c["count"].integer(1, kMaxRank);
  }
  if (root.has("dtype")) doc.dtype = root["dtype"].name<Precision>();
  doc.total_ranks = static_cast<std::int32_t>(root["total_ranks"].integer(1, kMaxRank));
  if (root.has("source")) {
    root["source"].object({"model", "training", "parallelism"});
    doc.source = root["source"].j;
  }
  if (root.has("groups")) {
    const At gs = root["groups"];
    const std::size_t n = gs.array();
    for (std::size_t i = 0; i < n; ++i) {
      const At g = gs[i];
      g.object({"size", "ranks"});
      GroupSet set;
      const At ranks = g["ranks"];
      const std::size_t count = ranks.array();
      set.group_size = g.has("size") ? static_cast<std::int32_t>(g["size"].integer(1, kMaxRank)) : static_cast<std::int32_t>(count);
      set.ranks.reserve(count);
      for (std::size_t r = 0; r < count; ++r) set.ranks.push_back(static_cast<std::int32_t>(ranks[r].integer(0, kMaxRank)));
      doc.groups.push_back(std::move(set));
    }
  }
  if (root.has("pairs")) {
    const At ps = root["pairs"];
    const std::size_t n = ps.array();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t count = ps[i].array();
      std::vector<RankPair> list;
      for (std::size_t p = 0; p < count; ++p) {
        const At pair = ps[i][p];
        if (pair.array() != 2) pair.fail("a pair [src, dst]", pair.j.dump());
        list.emplace_back(static_cast<std::int32_t>(pair[std::size_t{0}].integer(0, kMaxRank)), static_cast<std::int32_t>(pair[std::size_t{1}].integer(0, kMaxRank)));
      }
      doc.pairs.push_back(std::move(list));
    }
  }
  if (root.has("works")) {
    const At ws = root["works"];
    const std::size_t n = ws.array();
    doc.works.reserve(n);
    for (std::size_t i = 0; i < n; ++i) doc.works.push_back(read_work(ws[i]));
  }
  const At ranks = root["ranks"];
  const std::size_t n = ranks.array();
  doc.ranks.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const At r = ranks[i];
    r.object({"rank", "stage", "nodes"});
    r.need("rank");
    r.need("nodes");
    TraceRank tr;
    tr.rank = static_cast<std::int32_t>(r["rank"].integer(0, kMaxRank));
    if (r.has("stage")) tr.stage = static_cast<std::int32_t>(r["stage"].integer(0, kMaxRank));
    const At nodes = r["nodes"];
    const std::size_t count = nodes.array();
    tr.nodes.reserve(count);
    for (std::size_t k = 0; k < count; ++k) tr.nodes.push_back(read_node(nodes[k], doc));
    doc.ranks.push_back(std::move(tr));
  }
  return doc;
}

Trace read_trace_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the trace file", path));
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON (byte {}): {}", path, e.byte, e.what()));
  }
  return build_trace(parse_trace_json(j, path));
}


}  // namespace trnsim::trace
