// read_trace_json: trnsim's JSON trace format (traces/README.md) into a TraceDocument, then
// build_trace. Every field is checked for its type and range where it is read; unknown keys are
// errors (a misspelt "deps" must not silently drop dependencies). This file is the DOM reader,
// whose messages are the reference; read_trace_json goes through the streaming reader
// (trace_json_stream.cpp) first and comes here only when that one gives up.
#include <filesystem>
#include <fstream>

#include "trace_json_checks.hpp"
#include "trnsim/json_nesting.hpp"

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes

namespace json_checks {

std::string type_of(const json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  return std::string(j.type_name()) == "null" ? "null" : fmt::format("{} {}", j.is_array() || j.is_object() ? "an" : "a", j.type_name());
}

namespace {

cost::Kernel read_kernel(const At& a) {
  a.object({"name", "op", "m", "n", "k", "batch", "causal", "flops", "vector_elements", "scalar_elements", "hbm_bytes",
            "low_precision", "element_bytes", "fused_epilogue", "transpose"});
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
  if (a.has("transpose")) k.transpose = a["transpose"].boolean();
  return k;
}

}  // namespace

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

void read_works(const At& root, TraceDocument& doc) {
  if (!root.has("works")) return;
  const At ws = root["works"];
  const std::size_t n = ws.array();
  doc.works.reserve(n);
  for (std::size_t i = 0; i < n; ++i) doc.works.push_back(read_work(ws[i]));
}

void read_header(const At& root, TraceDocument& doc, bool works_read) {
  root.object({"format", "version", "cluster", "dtype", "total_ranks", "source", "groups", "pairs", "works", "ranks", "name", "note"});
  for (const char* k : {"format", "version", "total_ranks", "ranks"}) root.need(k);
  for (const char* k : {"name", "note"})  // free text (traces/README.md): a number or a list is a mistake
    if (root.has(k)) (void)root[k].string();
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
      g.need("ranks");  // without it, at("ranks") threw nlohmann's out_of_range: exit 3 (found by fuzz_trace)
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
  if (!works_read) read_works(root, doc);
}

}  // namespace json_checks

using namespace json_checks;

TraceDocument parse_trace_json(const json& j, const std::string& file) {
  const At root{file, j, ""};
  TraceDocument doc;
  doc.file = file;
  doc.format = "trnsim";
  read_header(root, doc, false);
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

TraceDocument parse_trace_json_text(std::string_view text, const std::string& file) {
  check_json_nesting(text, file);
  if (auto doc = stream_trace_json(text, file)) return std::move(*doc);
  // The streaming reader gave up (an error, or a layout it does not take): the DOM reader names
  // the first error, or reads what the streaming reader did not.
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON (byte {}): {}", file, e.byte, e.what()));
  } catch (const json::exception& e) {
    // A number beyond a double (1e400) is nlohmann's out_of_range 406, not a parse_error.
    throw InputError(fmt::format("{}: not valid JSON: {}", file, e.what()));
  }
  return parse_trace_json(j, file);
}

Trace read_trace_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open the trace file", path));
  std::string text;
  std::error_code ec;  // a size to reserve, when the file has one (else the text grows)
  if (const auto size = std::filesystem::file_size(path, ec); !ec) text.reserve(size);
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) text.append(buffer, static_cast<std::size_t>(in.gcount()));
  return build_trace(parse_trace_json_text(text, path));
}

}  // namespace trnsim::trace
