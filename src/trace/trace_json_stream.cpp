// stream_trace_json: the fast reader of trnsim's JSON traces. nlohmann's SAX parser feeds the
// nodes of /ranks/R/nodes straight into TraceNodes, without a DOM of the whole file (a DOM of a
// million-node trace costs several seconds and most of the memory). Everything else (the header,
// the groups, works, an inline work) is small and is built as a DOM and checked by the DOM
// reader's own code (trace_json_checks.hpp); a node goes through the same read_node, on an
// accessor over the node's fields. The rule that keeps both readers' answers the same: this reader
// never names an error. At the first thing it does not expect (an error of any kind, a duplicate
// key, the works after the ranks) it gives up, and the DOM reader reads the file again from the
// start and names its first error as it always did.
#include <array>
#include <optional>
#include <string_view>

#include "trace_json_checks.hpp"

namespace trnsim::trace {

using namespace trnsim::workload;  // the StepGraph a trace becomes
using namespace json_checks;

namespace {

// Thrown where the DOM reader would have thrown, or where this reader does not follow: the
// caller falls back to the DOM reader.
struct GiveUp {};

// The keys of a node, in read_node's order; a key's slot.
constexpr std::array<std::string_view, 14> kNodeKeys{"id",    "name",  "kind",  "category", "layer", "micro_batch", "work",
                                                     "op",    "bytes", "group", "peer",     "tag",   "pairs",       "deps"};
constexpr int kDeps = 13;
constexpr int kWork = 6;

// By length and first letter, then the whole key: read_node asks for a slot about twenty times a
// node, so a scan of the fourteen keys would cost more than the parse.
constexpr int slot_of(std::string_view key) {
  int s = -1;
  const char c = key.empty() ? '\0' : key[0];
  switch (key.size()) {
    case 2: s = c == 'i' ? 0 : c == 'o' ? 7 : -1; break;
    case 3: s = 11; break;
    case 4: s = c == 'n' ? 1 : c == 'k' ? 2 : c == 'w' ? 6 : c == 'p' ? 10 : c == 'd' ? 13 : -1; break;
    case 5: s = c == 'l' ? 4 : c == 'b' ? 8 : c == 'g' ? 9 : c == 'p' ? 12 : -1; break;
    case 8: s = 3; break;
    case 11: s = 5; break;
    default: break;
  }
  return s >= 0 && kNodeKeys[static_cast<std::size_t>(s)] == key ? s : -1;
}
static_assert(slot_of("micro_batch") == 5 && slot_of("pairs") == 12 && slot_of("peer") == 10 && slot_of("deps") == kDeps &&
              slot_of("work") == kWork && slot_of("tag") == 11 && slot_of("tags") == -1 && slot_of("") == -1);

// One scalar (or the inline work object, or the dependency list) of a node as the lexer gave it:
// integers that fit uint64 without a sign arrive as Unsigned, with a sign as Signed (as in the DOM).
struct Value {
  enum Type : std::uint8_t { Absent, Null, Boolean, Signed, Unsigned, Float, String, Object, Ids } type = Absent;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  std::string s;
  json object;                      // Object: the inline work
  std::vector<std::uint64_t> ids;   // Ids: deps
};

// At's members on a Value (what read_node calls), accepting exactly what At accepts.
struct Field {
  const Value& v;
  const std::string& file;

  [[noreturn]] void fail(const std::string&, const std::string&) const { throw GiveUp{}; }
  bool is_object() const { return v.type == Value::Object; }
  std::string dump() const { return {}; }  // only in a message, never made here
  bool is_integer() const { return v.type == Value::Signed || v.type == Value::Unsigned; }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const {
    if (v.type == Value::Unsigned && v.u > static_cast<std::uint64_t>(hi)) fail({}, {});
    if (!is_integer()) fail({}, {});
    const auto x = v.type == Value::Unsigned ? static_cast<std::int64_t>(v.u) : v.i;
    if (x < lo || x > hi) fail({}, {});
    return x;
  }
  std::uint64_t id() const {
    if (v.type == Value::Unsigned) return v.u;
    if (v.type == Value::Signed && v.i >= 0) return static_cast<std::uint64_t>(v.i);  // "-0"
    fail({}, {});
  }
  void ids(std::vector<std::uint64_t>& out) const {
    if (v.type != Value::Ids) fail({}, {});
    out = v.ids;  // the node's own allocation, of its size
  }
  double number(double lo) const {
    double x = 0;
    switch (v.type) {
      case Value::Signed: x = static_cast<double>(v.i); break;
      case Value::Unsigned: x = static_cast<double>(v.u); break;
      case Value::Float: x = v.d; break;
      default: fail({}, {});
    }
    if (!std::isfinite(x) || x < lo) fail({}, {});
    return x;
  }
  std::string string() const {
    if (v.type != Value::String) fail({}, {});
    return v.s;
  }
  template <class E>
  E name() const {
    if (v.type != Value::String) fail({}, {});
    const auto e = parse_enum<E>(v.s);
    if (!e) fail({}, {});
    return *e;
  }
};

// An inline work: the DOM reader's read_work on the object as parsed (found by read_node through
// argument-dependent lookup).
Work read_work_of(const Field& f) { return read_work(At{f.file, f.v.object, ""}); }

// read_node's view of a node's fields.
struct NodeFields {
  const std::array<Value, kNodeKeys.size()>& values;
  const std::string& file;

  void object(std::initializer_list<const char*>) const {}  // unknown keys gave up as they came
  bool has(const char* key) const { return values[static_cast<std::size_t>(slot_of(key))].type != Value::Absent; }
  void need(const char* key) const {
    if (!has(key)) throw GiveUp{};
  }
  Field operator[](const char* key) const { return {values[static_cast<std::size_t>(slot_of(key))], file}; }
};

// The SAX handler. Where it is: the root object; the ranks array; a rank object; its nodes
// array; a node object; a node's deps; or inside a value it hands to a DOM builder (`capture_`).
class TraceSax {
 public:
  explicit TraceSax(TraceDocument& doc) : doc_(doc) { root_ = json::object(); }

  bool null() { return scalar(Value::Null, [](Value&) {}); }
  bool boolean(bool b) {
    if (capture_) return captured(capture_->boolean(b));
    return scalar(Value::Boolean, [b](Value& v) { v.u = b ? 1 : 0; });
  }
  bool number_integer(std::int64_t x) {
    if (capture_) return captured(capture_->number_integer(x));
    if (where_ == Where::Deps) {
      if (x < 0) return give_up();
      node_[kDeps].ids.push_back(static_cast<std::uint64_t>(x));  // "-0", as the DOM reader's id() takes it
      return true;
    }
    return scalar(Value::Signed, [x](Value& v) { v.i = x; });
  }
  bool number_unsigned(std::uint64_t x) {
    if (capture_) return captured(capture_->number_unsigned(x));
    if (where_ == Where::Deps) {
      node_[kDeps].ids.push_back(x);
      return true;
    }
    return scalar(Value::Unsigned, [x](Value& v) { v.u = x; });
  }
  bool number_float(double x, const std::string& text) {
    if (capture_) return captured(capture_->number_float(x, text));
    return scalar(Value::Float, [x](Value& v) { v.d = x; });
  }
  bool string(std::string& s) {
    if (capture_) return captured(capture_->string(s));
    return scalar(Value::String, [&s](Value& v) { v.s.assign(s); });
  }
  bool binary(json::binary_t&) { return give_up(); }

  bool start_object(std::size_t n) {
    if (capture_) return nest(capture_->start_object(n));
    switch (where_) {
      case Where::Top: where_ = Where::Root; return true;
      case Where::Ranks:
        where_ = Where::Rank;
        rank_ = {};
        rank_seen_ = {};
        doc_.ranks.emplace_back();
        return true;
      case Where::Nodes:
        where_ = Where::Node;
        for (Value& v : node_) v.type = Value::Absent;
        return true;
      case Where::Node:
        if (slot_ != kWork) return give_up();  // only an inline work is an object
        return begin_capture(node_[kWork].object, true) && nest(capture_->start_object(n));
      case Where::Root: return begin_root_capture() && nest(capture_->start_object(n));
      default: return give_up();
    }
  }
  bool end_object() {
    if (capture_) return unnest(capture_->end_object());
    switch (where_) {
      case Where::Root: where_ = Where::Done; return true;
      case Where::Rank: return end_rank();
      case Where::Node: return end_node();
      default: return give_up();
    }
  }
  bool start_array(std::size_t n) {
    if (capture_) return nest(capture_->start_array(n));
    switch (where_) {
      case Where::Root:
        if (key_ == "ranks") return start_ranks();
        return begin_root_capture() && nest(capture_->start_array(n));
      case Where::Rank:
        if (key_ != "nodes" || rank_seen_[2]) return give_up();
        rank_seen_[2] = true;
        where_ = Where::Nodes;
        return true;
      case Where::Node:
        if (slot_ != kDeps) return give_up();
        where_ = Where::Deps;
        node_[kDeps].ids.clear();
        return true;
      default: return give_up();
    }
  }
  bool end_array() {
    if (capture_) return unnest(capture_->end_array());
    switch (where_) {
      case Where::Ranks: where_ = Where::Root; return true;
      case Where::Nodes: where_ = Where::Rank; return true;
      case Where::Deps:
        node_[kDeps].type = Value::Ids;
        where_ = Where::Node;
        return true;
      default: return give_up();
    }
  }
  bool key(std::string& k) {
    if (capture_) return captured(capture_->key(k));
    switch (where_) {
      case Where::Root:
        // A key twice: the DOM keeps the last value; this reader does not follow.
        if ((k == "ranks" && ranks_started_) || root_.contains(k)) return give_up();
        if (k == "works" && ranks_started_) return give_up();  // the nodes were read without them
        key_ = k;
        return true;
      case Where::Rank:
        key_ = k;
        return true;
      case Where::Node:
        slot_ = slot_of(k);
        if (slot_ < 0 || node_[static_cast<std::size_t>(slot_)].type != Value::Absent) return give_up();
        return true;
      default: return give_up();
    }
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return give_up(); }

  // After a successful parse: the header, checked as the DOM reader checks it.
  bool finish() {
    if (where_ != Where::Done || !ranks_started_) return false;
    read_header(At{doc_.file, root_, ""}, doc_, true);
    return true;
  }

 private:
  enum class Where : std::uint8_t { Top, Root, Ranks, Rank, Nodes, Node, Deps, Done };

  bool give_up() { throw GiveUp{}; }

  // A scalar where a node or rank field (or a root value) is expected.
  template <class Set>
  bool scalar(Value::Type type, Set set) {
    if (capture_) {
      // only null reaches here while capturing (the others forward themselves)
      return captured(capture_->null());
    }
    switch (where_) {
      case Where::Node: {
        Value& v = node_[static_cast<std::size_t>(slot_)];
        if (slot_ == kDeps) return give_up();  // deps must be an array
        v.type = type;
        set(v);
        return true;
      }
      case Where::Rank: {
        const int f = key_ == "rank" ? 0 : key_ == "stage" ? 1 : -1;
        if (f < 0 || rank_seen_[static_cast<std::size_t>(f)]) return give_up();
        rank_seen_[static_cast<std::size_t>(f)] = true;
        Value& v = f == 0 ? rank_ : stage_;
        v.type = type;
        set(v);
        return true;
      }
      case Where::Root: {
        if (key_ == "ranks") return give_up();
        Value v;
        v.type = type;
        set(v);
        json& j = root_[key_];
        switch (type) {
          case Value::Null: j = nullptr; break;
          case Value::Boolean: j = v.u != 0; break;
          case Value::Signed: j = v.i; break;
          case Value::Unsigned: j = v.u; break;
          case Value::Float: j = v.d; break;
          case Value::String: j = v.s; break;
          default: return give_up();
        }
        return true;
      }
      default: return give_up();
    }
  }

  // A compound value handed to a DOM builder until it closes.
  bool begin_capture(json& target, bool work) {
    target = json();
    capture_.emplace(target, false);
    capture_work_ = work;
    depth_ = 0;
    return true;
  }
  bool begin_root_capture() {
    if (key_ == "ranks") return give_up();
    return begin_capture(root_[key_], false);
  }
  bool nest(bool ok) {
    ++depth_;
    return ok || give_up();
  }
  bool unnest(bool ok) {
    if (!ok) return give_up();
    if (--depth_ == 0) {
      capture_.reset();
      if (capture_work_) node_[kWork].type = Value::Object;
    }
    return true;
  }
  bool captured(bool ok) { return ok || give_up(); }

  bool start_ranks() {
    ranks_started_ = true;
    root_["ranks"] = json::array();  // for the header's checks of the root's keys
    // The top-level works, which compute nodes index, before the first node.
    read_works(At{doc_.file, root_, ""}, doc_);
    where_ = Where::Ranks;
    return true;
  }

  bool end_rank() {
    if (!rank_seen_[0] || !rank_seen_[2]) return give_up();
    TraceRank& tr = doc_.ranks.back();
    tr.rank = static_cast<std::int32_t>(Field{rank_, doc_.file}.integer(0, kMaxRank));
    if (rank_seen_[1]) tr.stage = static_cast<std::int32_t>(Field{stage_, doc_.file}.integer(0, kMaxRank));
    where_ = Where::Ranks;
    return true;
  }

  bool end_node() {
    doc_.ranks.back().nodes.push_back(read_node(NodeFields{node_, doc_.file}, doc_));
    where_ = Where::Nodes;
    return true;
  }

  TraceDocument& doc_;
  json root_;                       // the root object without the ranks
  Where where_ = Where::Top;
  std::string key_;                 // the last key of the root or of a rank
  bool ranks_started_ = false;
  Value rank_, stage_;
  std::array<bool, 3> rank_seen_{};  // rank, stage, nodes
  std::array<Value, kNodeKeys.size()> node_;
  int slot_ = -1;                   // the node key whose value comes next
  std::optional<nlohmann::detail::json_sax_dom_parser<json>> capture_;
  bool capture_work_ = false;
  int depth_ = 0;
};

}  // namespace

std::optional<TraceDocument> stream_trace_json(std::string_view text, const std::string& file) {
  TraceDocument doc;
  doc.file = file;
  doc.format = "trnsim";
  TraceSax sax(doc);
  try {
    if (!json::sax_parse(text.begin(), text.end(), &sax) || !sax.finish()) return std::nullopt;
  } catch (const GiveUp&) {
    return std::nullopt;
  } catch (const InputError&) {
    return std::nullopt;  // from the DOM reader's checks of a captured value
  }
  return doc;
}

}  // namespace trnsim::trace
