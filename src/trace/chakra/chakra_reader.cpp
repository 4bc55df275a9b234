// read_chakra: Chakra per-rank files into a TraceDocument (contract in trnsim/trace/chakra.hpp).
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>

#include "chakra_et.pb.h"
#include "trnsim/error.hpp"
#include "trnsim/json_nesting.hpp"
#include "trnsim/trace/chakra.hpp"

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes
namespace {

namespace pb = trnsim::chakra;
namespace fs = std::filesystem;

std::string extension(ChakraEncoding e) { return e == ChakraEncoding::Binary ? ".et" : ".json"; }

// The integer value of an attribute, whichever integer field holds it.
std::optional<std::int64_t> integer(const pb::AttributeProto& a, const std::string& where) {
  using V = pb::AttributeProto;
  switch (a.value_case()) {
    case V::kInt64Val: return a.int64_val();
    case V::kInt32Val: return a.int32_val();
    case V::kUint32Val: return a.uint32_val();
    case V::kSint32Val: return a.sint32_val();
    case V::kSint64Val: return a.sint64_val();
    case V::kFixed32Val: return a.fixed32_val();
    case V::kSfixed32Val: return a.sfixed32_val();
    case V::kSfixed64Val: return a.sfixed64_val();
    case V::kUint64Val:
    case V::kFixed64Val: {
      const std::uint64_t v = a.value_case() == V::kUint64Val ? a.uint64_val() : a.fixed64_val();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw InputError(fmt::format("{}: attribute {}: {} is too large", where, a.name(), v));
      return static_cast<std::int64_t>(v);
    }
    default: return std::nullopt;
  }
}

struct RankReader {
  TraceDocument& doc;
  const std::map<std::string, std::uint32_t>& group_of;
  std::uint32_t& all_ranks_group;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::uint32_t>& work_of;  // (ops, bytes, us)
  std::string file;
  TraceRank rank;

  std::string where(const pb::Node& n) const {
    return fmt::format("{}: rank {} node {} ({})", file, rank.rank, n.id(), n.name());
  }
  const pb::AttributeProto* attr(const pb::Node& n, const char* name) const {
    for (const auto& a : n.attr())
      if (a.name() == name) return &a;
    return nullptr;
  }
  std::optional<std::int64_t> int_attr(const pb::Node& n, const char* name) const {
    const pb::AttributeProto* a = attr(n, name);
    if (!a) return std::nullopt;
    const auto v = integer(*a, where(n));
    if (!v) throw InputError(fmt::format("{}: attribute {}: expected an integer value, found another type", where(n), name));
    return v;
  }
  std::int64_t required_int(const pb::Node& n, const char* name) const {
    const auto v = int_attr(n, name);
    if (!v) throw InputError(fmt::format("{}: missing attribute {}", where(n), name));
    return *v;
  }

  // trnsim's own attribute trnsim_category (written by write_chakra; other writers have none):
  // the communication category, which sets the stream a collective runs on; absent: `fallback`.
  Category category(const pb::Node& n, Category fallback) const {
    const pb::AttributeProto* a = attr(n, "trnsim_category");
    if (!a) return fallback;
    const auto c = a->value_case() == pb::AttributeProto::kStringVal ? parse_enum<Category>(a->string_val()) : std::nullopt;
    if (!c || (*c != Category::TpComm && *c != Category::DpComm && *c != Category::EpComm && *c != Category::CpComm))
      throw InputError(fmt::format("{}: attribute trnsim_category: expected \"tp_comm\", \"dp_comm\", \"ep_comm\" or "
                                   "\"cp_comm\", found {}",
                                   where(n), a->value_case() == pb::AttributeProto::kStringVal
                                                 ? fmt::format("\"{}\"", a->string_val())
                                                 : std::string("another type")));
    return *c;
  }
  std::uint32_t group(const pb::Node& n) {
    const pb::AttributeProto* pg = attr(n, "pg_name");
    if (!pg || group_of.empty()) return all_ranks();
    if (pg->value_case() != pb::AttributeProto::kStringVal)
      throw InputError(fmt::format("{}: attribute pg_name: expected a string", where(n)));
    const auto it = group_of.find(pg->string_val());
    if (it == group_of.end())
      throw InputError(fmt::format("{}: pg_name \"{}\" is not a group of the group file", where(n), pg->string_val()));
    return it->second;
  }

  std::uint32_t work(std::int64_t ops, std::int64_t bytes, std::int64_t micros, const std::string& name) {
    const auto [it, fresh] = work_of.try_emplace({ops, bytes, micros}, static_cast<std::uint32_t>(doc.works.size()));
    if (fresh) {
      Work w;
      w.name = name;
      if (micros >= 0) {
        w.measured_s = static_cast<double>(micros) * 1e-6;
      } else if (ops > 0 || bytes > 0) {
        cost::Kernel k;
        k.name = name;
        k.op = ops > 0 ? cost::OpClass::Matmul : cost::OpClass::Elementwise;
        k.flops = static_cast<double>(ops);
        k.hbm_bytes = static_cast<double>(bytes);
        w.kernels.push_back(k);
      }  // else no kernels: no time (an ignored node)
      doc.works.push_back(std::move(w));
    }
    return it->second;
  }

  void ignore(TraceNode& t, const pb::Node& n, const std::string& why) {
    doc.ignored.push_back(fmt::format("rank {} node {} ({}): {}", rank.rank, n.id(), n.name(), why));
    t.kind = NodeKind::Compute;
    t.work = work(0, 0, -1, "ignored");
  }

  void node(const pb::Node& n) {
    TraceNode t;
    t.id = n.id();
    t.name = n.name();
    t.deps.assign(n.data_deps().begin(), n.data_deps().end());
    switch (n.type()) {
      case pb::COMP_NODE: {
        const pb::AttributeProto* cpu = attr(n, "is_cpu_op");
        if (cpu && cpu->value_case() == pb::AttributeProto::kBoolVal && cpu->bool_val()) {
          ignore(t, n, "a CPU operation (is_cpu_op)");
          break;
        }
        const std::int64_t ops = int_attr(n, "num_ops").value_or(0);
        const std::int64_t bytes = int_attr(n, "tensor_size").value_or(0);
        if (ops < 0 || bytes < 0) throw InputError(fmt::format("{}: num_ops and tensor_size must be >= 0", where(n)));
        t.kind = NodeKind::Compute;
        if (ops > 0 || bytes > 0) {
          t.work = work(ops, bytes, -1, n.name());
        } else if (n.duration_micros() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          throw InputError(fmt::format("{}: duration_micros: expected at most {}, found {}", where(n),
                                       std::numeric_limits<std::int64_t>::max(), n.duration_micros()));
        } else if (n.duration_micros() > 0) {
          t.work = work(0, 0, static_cast<std::int64_t>(n.duration_micros()), n.name());
        } else {
          ignore(t, n, "a compute node without num_ops, tensor_size or duration_micros");
        }
        break;
      }
      case pb::COMM_COLL_NODE: {
        t.kind = NodeKind::Collective;
        t.category = category(n, Category::TpComm);
        const std::int64_t type = required_int(n, "comm_type");
        switch (type) {
          case pb::ALL_REDUCE: t.op = CollectiveOp::AllReduce; break;
          case pb::ALL_GATHER: t.op = CollectiveOp::AllGather; break;
          case pb::REDUCE_SCATTER: t.op = CollectiveOp::ReduceScatter; break;
          case pb::ALL_TO_ALL: t.op = CollectiveOp::AllToAll; break;
          case pb::BROADCAST: t.op = CollectiveOp::Broadcast; break;
          default: {
            const bool fits = type >= std::numeric_limits<int>::min() && type <= std::numeric_limits<int>::max();
            const std::string name = fits && pb::CollectiveCommType_IsValid(static_cast<int>(type))
                                         ? pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(type))
                                         : "unknown";
            throw InputError(fmt::format("{}: collective type {} ({}) is not supported (supported: ALL_REDUCE, ALL_GATHER, "
                                         "REDUCE_SCATTER, ALL_TO_ALL, BROADCAST)",
                                         where(n), name, type));
          }
        }
        const std::int64_t size = required_int(n, "comm_size");
        if (size < 0) throw InputError(fmt::format("{}: comm_size {} is negative", where(n), size));
        t.bytes = static_cast<double>(size);
        t.group = group(n);
        break;
      }
      case pb::COMM_SEND_NODE:
      case pb::COMM_RECV_NODE: {
        const bool send = n.type() == pb::COMM_SEND_NODE;
        if (category(n, Category::PpComm) == Category::CpComm) {
          // A ring step of context parallelism (write_chakra): the send is the step, a send-recv
          // call on its pair group, as the trnsim JSON trace says it; the recv, on which nothing
          // waits, is its receiving half and no node of its own.
          if (!send) return;
          const std::int64_t size = required_int(n, "comm_size");
          if (size < 0) throw InputError(fmt::format("{}: comm_size {} is negative", where(n), size));
          if (!attr(n, "pg_name") || group_of.empty())
            throw InputError(fmt::format("{}: a cp_comm ring step needs pg_name, a group of the group file", where(n)));
          t.kind = NodeKind::Collective;
          t.category = Category::CpComm;
          t.op = CollectiveOp::SendRecv;
          t.bytes = static_cast<double>(size);
          t.group = group(n);
          break;
        }
        t.kind = send ? NodeKind::Send : NodeKind::Recv;
        t.category = Category::PpComm;
        const std::int64_t peer = required_int(n, send ? "comm_dst" : "comm_src");
        if (peer < 0 || peer > std::numeric_limits<std::int32_t>::max())
          throw InputError(fmt::format("{}: {}: expected a rank (an integer >= 0), found {}", where(n), send ? "comm_dst" : "comm_src", peer));
        t.peer = static_cast<std::int32_t>(peer);
        t.tag = int_attr(n, "comm_tag").value_or(0);
        t.bytes = static_cast<double>(send ? required_int(n, "comm_size") : int_attr(n, "comm_size").value_or(0));
        break;
      }
      default:
        ignore(t, n, fmt::format("a {} (not replayed)", pb::NodeType_Name(n.type())));
        break;
    }
    rank.nodes.push_back(std::move(t));
  }

  std::uint32_t all_ranks() {
    if (all_ranks_group == kNoIndex) {
      all_ranks_group = static_cast<std::uint32_t>(doc.groups.size());
      doc.groups.emplace_back();  // filled once the number of ranks is known
    }
    return all_ranks_group;
  }

  void binary(const std::string& bytes) {
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw InputError(fmt::format("{}: expected a Chakra file of at most 2 GiB (protobuf's limit), found {} bytes", file, bytes.size()));
    google::protobuf::io::CodedInputStream stream(reinterpret_cast<const std::uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
    for (std::size_t message = 0; stream.CurrentPosition() < static_cast<int>(bytes.size()); ++message) {
      const int at = stream.CurrentPosition();
      // Where a broken message sits, for the reader of the message: the rank and the node before it.
      const auto after = [this] {
        return rank.nodes.empty() ? fmt::format("rank {}, before any node", rank.rank)
                                  : fmt::format("rank {}, after node {}", rank.rank, rank.nodes.back().id);
      };
      std::uint32_t length = 0;
      if (!stream.ReadVarint32(&length))
        throw InputError(fmt::format("{}: message {} at byte {}: expected a length (base-128 varint), found a malformed or cut-off one "
                                     "({})",
                                     file, message, at, after()));
      const auto left = bytes.size() - static_cast<std::size_t>(stream.CurrentPosition());
      if (length > left)
        throw InputError(fmt::format("{}: message {} at byte {}: expected {} bytes, found {} (the file is truncated; {})", file,
                                     message, at, length, left, after()));
      const char* data = bytes.data() + stream.CurrentPosition();
      if (message == 0) {
        pb::GlobalMetadata meta;
        if (!meta.ParseFromArray(data, static_cast<int>(length)))
          throw InputError(fmt::format("{}: message 0 at byte {}: expected a GlobalMetadata, found bytes that do not parse ({})", file,
                                       at, after()));
      } else {
        pb::Node n;
        if (!n.ParseFromArray(data, static_cast<int>(length)))
          throw InputError(fmt::format("{}: message {} at byte {}: expected a Node, found bytes that do not parse ({})", file, message,
                                       at, after()));
        node(n);
      }
      stream.Skip(static_cast<int>(length));
    }
  }

  void json_rendering(const std::string& bytes) {
    check_json_nesting(bytes, file);  // protobuf's JSON parser refuses more than 100 levels too
    std::istringstream in(bytes);
    namespace util = google::protobuf::util;
    util::JsonParseOptions options;
    for (std::size_t message = 0;; ++message) {
      in >> std::ws;
      if (in.peek() == std::char_traits<char>::eof()) break;
      nlohmann::json j;
      try {
        in >> j;
      } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number beyond double
        throw InputError(fmt::format("{}: object {}: not valid JSON: {}", file, message, e.what()));
      }
      const std::string text = j.dump();
      const auto status = message == 0 ? [&] { pb::GlobalMetadata m; return util::JsonStringToMessage(text, &m, options); }()
                                       : [&] {
                                           pb::Node n;
                                           auto s = util::JsonStringToMessage(text, &n, options);
                                           if (s.ok()) node(n);
                                           return s;
                                         }();
      if (!status.ok())
        throw InputError(fmt::format("{}: object {}: expected a Chakra {}, found: {}", file, message,
                                     message == 0 ? "GlobalMetadata" : "Node", status.ToString()));
    }
  }
};

std::map<std::string, std::uint32_t> read_groups(const ChakraFile& file, TraceDocument& doc) {
  std::map<std::string, std::uint32_t> group_of;
  if (file.path.empty()) return group_of;
  const std::string& path = file.path;
  check_json_nesting(file.bytes, path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(file.bytes);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number beyond double
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: expected an object of group names to rank lists, found {}", path, j.type_name()));
  for (const auto& [name, ranks] : j.items()) {
    GroupSet g;
    if (!ranks.is_array() || ranks.empty())
      throw InputError(fmt::format("{}: /{}: expected a non-empty list of ranks, found {}", path, name, ranks.dump()));
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (!ranks[i].is_number_integer() || ranks[i].get<std::int64_t>() < 0 || ranks[i].get<std::int64_t>() > (1LL << 30))
        throw InputError(fmt::format("{}: /{}/{}: expected a rank (an integer >= 0), found {}", path, name, i, ranks[i].dump()));
      g.ranks.push_back(ranks[i].get<std::int32_t>());
    }
    g.group_size = static_cast<std::int32_t>(g.ranks.size());
    group_of.emplace(name, static_cast<std::uint32_t>(doc.groups.size()));
    doc.groups.push_back(std::move(g));
  }
  return group_of;
}

// The whole file, or InputError naming it (a directory, an unreadable file).
std::string file_bytes(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(fmt::format("{}: expected a Chakra file, found a directory", path));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  if (in) buffer << in.rdbuf();
  if (!in || in.bad()) throw InputError(fmt::format("{}: cannot read the file", path));
  return std::move(buffer).str();
}

}  // namespace

TraceDocument parse_chakra(const std::string& prefix, const std::vector<ChakraFile>& ranks, const ChakraFile& groups,
                           ChakraEncoding encoding) {
  // protobuf logs what it refuses (a string field that is not UTF-8, ...) on stderr; the refusal
  // itself becomes an InputError, the one line an error gets.
  const google::protobuf::LogSilencer quiet;
  TraceDocument doc;
  doc.file = prefix + ".<rank>" + extension(encoding);
  doc.format = encoding == ChakraEncoding::Binary ? "chakra" : "chakra-json";
  const auto group_of = read_groups(groups, doc);
  std::uint32_t all_group = kNoIndex;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::uint32_t> works;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankReader reader{doc, group_of, all_group, works, ranks[r].path, {}};
    reader.rank.rank = static_cast<std::int32_t>(r);
    if (encoding == ChakraEncoding::Binary) reader.binary(ranks[r].bytes);
    else reader.json_rendering(ranks[r].bytes);
    doc.ranks.push_back(std::move(reader.rank));
  }
  if (doc.ranks.empty()) throw InputError(fmt::format("{}.0{}: no such file (the first rank's Chakra file)", prefix, extension(encoding)));
  doc.total_ranks = static_cast<std::int32_t>(doc.ranks.size());
  if (all_group != kNoIndex) {
    GroupSet& g = doc.groups[all_group];
    for (std::int32_t r = 0; r < doc.total_ranks; ++r) g.ranks.push_back(r);
    g.group_size = doc.total_ranks;
  }
  return doc;
}

TraceDocument read_chakra(const std::string& prefix, ChakraEncoding encoding) {
  ChakraFile groups;
  if (fs::exists(prefix + ".groups.json")) groups = {prefix + ".groups.json", file_bytes(prefix + ".groups.json")};
  std::vector<ChakraFile> ranks;
  for (std::int32_t r = 0;; ++r) {
    std::string file = fmt::format("{}.{}{}", prefix, r, extension(encoding));
    if (!fs::exists(file)) break;
    std::string bytes = file_bytes(file);
    ranks.push_back({std::move(file), std::move(bytes)});
  }
  return parse_chakra(prefix, ranks, groups, encoding);
}

}  // namespace trnsim::trace
