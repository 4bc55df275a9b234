#pragma once
// The checks of trnsim's JSON trace format, shared by its two readers: the DOM reader
// (parse_trace_json, whose messages are the reference) and the streaming reader
// (trace_json_stream.cpp), which must accept exactly what the DOM reader accepts and build the
// same TraceDocument. read_node is written once, for any accessor with At's interface: At walks a
// parsed JSON value and throws InputError with the path; the streaming reader's accessor gives up
// instead, and the DOM reader then names the first error.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trnsim/error.hpp"
#include "trnsim/trace/trace.hpp"

namespace trnsim::trace::json_checks {

using nlohmann::json;

inline constexpr std::int64_t kMaxRank = (std::int64_t{1} << 31) - 1;
inline constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;

std::string type_of(const json& j);

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
  bool is_object() const { return j.is_object(); }
  std::string dump() const { return j.dump(); }

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
    if (!j.is_number_integer()) fail(fmt::format("an integer in [{}, {}]", lo, hi), j.is_number() ? j.dump() : type_of(j));
    const auto v = j.get<std::int64_t>();
    if (v < lo || v > hi) fail(fmt::format("an integer in [{}, {}]", lo, hi), j.dump());
    return v;
  }
  std::uint64_t id() const {
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
      fail("a node id (an integer >= 0)", j.is_number() ? j.dump() : type_of(j));
    return j.get<std::uint64_t>();
  }
  void ids(std::vector<std::uint64_t>& out) const {
    const std::size_t count = array();
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) out.push_back((*this)[i].id());
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

Work read_work(const At& a);
// The top-level works (/works) appended to doc.works.
void read_works(const At& root, TraceDocument& doc);
// Everything of the root object but the ranks (and the works when `works_read`): its keys, format,
// version, cluster, dtype, total_ranks, source, groups, pairs.
void read_header(const At& root, TraceDocument& doc, bool works_read);

// One node of /ranks/R/nodes. A: At, or the streaming reader's accessor (the same members).
// An inline work object goes through read_work_of(a["work"]) (At: read_work).
inline Work read_work_of(const At& a) { return read_work(a); }

template <class A>
TraceNode read_node(const A& a, TraceDocument& doc) {
  a.object({"id", "name", "kind", "category", "layer", "micro_batch", "work", "op", "bytes", "group", "peer", "tag", "pairs", "deps"});
  TraceNode n;
  a.need("id");
  a.need("kind");
  n.id = a["id"].id();
  if (a.has("name")) n.name = a["name"].string();
  n.kind = a["kind"].template name<NodeKind>();
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
      if (a["work"].is_object()) {
        n.work = static_cast<std::uint32_t>(doc.works.size());
        doc.works.push_back(read_work_of(a["work"]));
      } else {
        n.work = static_cast<std::uint32_t>(a["work"].integer(0, kMaxRank));
        if (n.work >= doc.works.size())
          a["work"].fail(fmt::format("an index into /works (0 to {}) or a work object", static_cast<std::int64_t>(doc.works.size()) - 1),
                         a["work"].dump());
      }
      if (n.name.empty()) n.name = doc.works[n.work].name;
      n.category = a.has("category") ? a["category"].template name<Category>() : Category::Forward;
      if (n.category == Category::TpComm || n.category == Category::DpComm || n.category == Category::PpComm ||
          n.category == Category::EpComm || n.category == Category::CpComm)
        a["category"].fail("forward, backward, recompute or optimizer on a compute node", std::string(to_string(n.category)));
      break;
    case NodeKind::Collective:
      only({"work", "peer", "tag", "pairs"}, "compute, send or recv nodes");
      for (const char* k : {"op", "bytes", "group"}) a.need(k);
      n.op = a["op"].template name<CollectiveOp>();
      n.bytes = a["bytes"].number(0);
      n.group = static_cast<std::uint32_t>(a["group"].integer(0, kMaxRank));
      n.category = a.has("category") ? a["category"].template name<Category>() : Category::TpComm;
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
  if (a.has("deps")) a["deps"].ids(n.deps);
  return n;
}

}  // namespace trnsim::trace::json_checks
