// The streaming reader of trnsim JSON traces (trace_json_stream.cpp) against the DOM reader
// (parse_trace_json), whose documents and messages are the reference.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "trnsim/error.hpp"
#include "trnsim/trace/trace.hpp"

using namespace trnsim;
using namespace trnsim::trace;
using nlohmann::json;

namespace {

std::string sample_text(const char* name) {
  std::ifstream in(std::string(TRNSIM_TEST_SOURCE_DIR) + "/traces/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The DOM reader's answer: the document or the message (as read_trace_json words a parse error).
TraceDocument dom(const std::string& text) { return parse_trace_json(json::parse(text), "t.json"); }

std::string error_of(const std::string& text) {
  try {
    parse_trace_json_text(text, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

void check_same(const TraceDocument& a, const TraceDocument& b) {
  CHECK(a.total_ranks == b.total_ranks);
  CHECK(a.version == b.version);
  CHECK(a.cluster_instance == b.cluster_instance);
  CHECK(a.cluster_count == b.cluster_count);
  CHECK(a.dtype == b.dtype);
  CHECK(a.source == b.source);
  REQUIRE(a.groups.size() == b.groups.size());
  for (std::size_t g = 0; g < a.groups.size(); ++g) CHECK(a.groups[g].ranks == b.groups[g].ranks);
  CHECK(a.pairs == b.pairs);
  REQUIRE(a.works.size() == b.works.size());
  for (std::size_t w = 0; w < a.works.size(); ++w) {
    CHECK(a.works[w].name == b.works[w].name);
    CHECK(a.works[w].measured_s == b.works[w].measured_s);
    CHECK(a.works[w].kernels.size() == b.works[w].kernels.size());
  }
  CHECK(a.ranks == b.ranks);  // every node field
}

}  // namespace

TEST_CASE("trace: the streaming reader reads both samples, node for node as the DOM reader does") {
  for (const char* name : {"dp4-trn1.json", "tp4-pp2-trn1.json"}) {
    INFO(name);
    const std::string text = sample_text(name);
    const auto streamed = stream_trace_json(text, "t.json");
    REQUIRE(streamed.has_value());  // the fast path, not the fallback
    check_same(*streamed, dom(text));
  }
  // The DP sample by hand: rank 0's optimizer (node 5) waits for nodes 2, 3 and 4 and is named
  // after its work, "adamw" (a compute node without a name takes its work's).
  const auto dp = stream_trace_json(sample_text("dp4-trn1.json"), "t.json");
  REQUIRE(dp->ranks.size() == 4);
  const TraceNode& opt = dp->ranks[0].nodes.at(5);
  CHECK(opt.deps == std::vector<std::uint64_t>{2, 3, 4});
  CHECK(opt.name == "adamw");
  CHECK(opt.category == workload::Category::Optimizer);
}

TEST_CASE("trace: what the streaming reader does not take, the DOM reader reads") {
  SECTION("works after the ranks (nodes index the works)") {
    const std::string text =
        R"({"ranks":[{"rank":0,"nodes":[{"id":0,"kind":"compute","work":0}]}],"format":"trnsim-trace","version":1,)"
        R"("total_ranks":1,"works":[{"name":"f","duration_us":5}]})";
    CHECK_FALSE(stream_trace_json(text, "t.json").has_value());
    const TraceDocument d = parse_trace_json_text(text, "t.json");
    check_same(d, dom(text));
    CHECK(d.ranks.at(0).nodes.at(0).name == "f");
  }
  SECTION("a key twice: nlohmann's DOM keeps the last value") {
    const std::string text =
        R"({"format":"trnsim-trace","version":1,"total_ranks":1,"works":[{"name":"f","duration_us":5}],)"
        R"("ranks":[{"rank":0,"nodes":[{"id":0,"id":3,"kind":"compute","work":0}]}]})";
    CHECK_FALSE(stream_trace_json(text, "t.json").has_value());
    CHECK(parse_trace_json_text(text, "t.json").ranks.at(0).nodes.at(0).id == 3);
  }
}

TEST_CASE("trace: the streaming reader leaves every message to the DOM reader, first error first") {
  const std::string good = sample_text("dp4-trn1.json");
  SECTION("a node error: the same message as the DOM reader's") {
    json doc = json::parse(good);
    doc["ranks"][2]["nodes"][0]["kind"] = "comp";
    CHECK(error_of(doc.dump()) == "t.json: /ranks/2/nodes/0/kind: expected one of compute, collective, send, recv, found \"comp\"");
    doc = json::parse(good);
    doc["ranks"][1]["nodes"][1]["deps"] = "0";
    CHECK(error_of(doc.dump()) == "t.json: /ranks/1/nodes/1/deps: expected an array, found a string");
  }
  SECTION("a node error before a header error later in the file: the header's, as the DOM reader checks it first") {
    const std::string text = R"({"format":"trnsim-trace","total_ranks":1,"ranks":[{"rank":0,"nodes":[{"id":0,"kind":"comp"}]}],"version":2})";
    CHECK(error_of(text) == "t.json: /version: expected format version 1 (this trnsim reads version 1), found 2");
  }
  SECTION("a number beyond a double: an input error, not nlohmann's out_of_range (found by a mutation run: exit 3)") {
    json doc = json::parse(good);
    doc["ranks"][0]["nodes"][2]["bytes"] = 7;  // a marker to replace by the literal
    std::string text = doc.dump();
    text.replace(text.find("\"bytes\":7"), 9, "\"bytes\":1e400");
    CHECK(error_of(text) == "t.json: not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'");
  }
  SECTION("a node error before a syntax error: the syntax error") {
    json doc = json::parse(good);
    doc["ranks"][0]["nodes"][0]["kind"] = "comp";
    const std::string text = doc.dump() + ",";  // trailing garbage
    CHECK_THAT(error_of(text), Catch::StartsWith("t.json: not valid JSON (byte "));
  }
}
