// Trace checks: every broken trace of the catalogue is an InputError naming the file, the rank and
// the node; a good one becomes the StepGraph its nodes describe.
#include <catch2/catch.hpp>

#include <fstream>

#include "trnsim/error.hpp"
#include "trnsim/trace/trace.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::trace;
using nlohmann::json;

namespace {

json sample(const char* name) {
  std::ifstream in(std::string(TRNSIM_TEST_SOURCE_DIR) + "/traces/" + name);
  return json::parse(in);
}

Trace build(const json& doc) { return build_trace(parse_trace_json(doc, "t.json")); }

std::string error_of(const json& doc) {
  try {
    build(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The nodes of the i-th rank entry (the samples list ranks in order, rank i at index i).
json& nodes(json& doc, std::size_t i) { return doc["ranks"][i]["nodes"]; }

}  // namespace

TEST_CASE("trace: the 4-rank DP sample becomes its 24 tasks, one call per bucket, one edge per dependency") {
  const Trace t = build(sample("dp4-trn1.json"));
  CHECK(t.graph.tasks.size() == 24);
  CHECK(t.graph.calls == 2);                  // two buckets, each one call of the 4 ranks
  CHECK(t.graph.collectives.size() == 1);     // both: all-reduce of 8 MiB on group 0
  CHECK(t.graph.successors.size() == 4 * 7);  // per rank the deps listed: 0 + 1 + 1 + 1 + 1 + 3
  CHECK(t.measured_tasks == 12);              // backward_a, backward_b and adamw on 4 ranks
  CHECK(t.graph.simulated_ranks == std::vector<std::int32_t>{0, 1, 2, 3});
}

TEST_CASE("trace: a recv is no task, and what waits for it waits for the send's transfer") {
  const Trace t = build(sample("tp4-pp2-trn1.json"));
  // 8 ranks x 6 nodes, of which the 8 receives (2 per stage-1 rank) are no task.
  CHECK(t.graph.tasks.size() == 40);
  std::size_t transfers = 0;
  for (const Task& task : t.graph.tasks) {
    if (task.kind != TaskKind::Transfer) continue;
    ++transfers;
    CHECK(task.peer == task.rank + 4);
    // Its one successor is the forward of the peer (stage 1) that waited for the recv.
    REQUIRE(task.succ_end - task.succ_begin == 1);
    const Task& next = t.graph.tasks[t.graph.successors[task.succ_begin]];
    CHECK(next.rank == task.peer);
    CHECK(next.kind == TaskKind::Compute);
  }
  CHECK(transfers == 8);
}

TEST_CASE("trace: the catalogue of broken traces, each an error naming the file, the rank and the node") {
  SECTION("a cycle: its nodes listed") {
    json doc = sample("dp4-trn1.json");
    nodes(doc, 0)[0]["deps"] = {5};  // forward waits for the optimizer, which waits for it
    const std::string e = error_of(doc);
    CHECK_THAT(e, Catch::StartsWith("t.json: dependency cycle: "));
    for (const char* n : {"rank 0 node 0", "rank 0 node 1", "rank 0 node 5"}) CHECK_THAT(e, Catch::Contains(n));
  }
  SECTION("a dependency on a node the rank does not have") {
    json doc = sample("dp4-trn1.json");
    nodes(doc, 2)[3]["deps"] = {9};
    CHECK(error_of(doc) == "t.json: rank 2 node 3 (backward_b): depends on node 9, which rank 2 does not have");
  }
  SECTION("a send without its receive") {
    json doc = sample("tp4-pp2-trn1.json");
    nodes(doc, 5).erase(3);  // rank 5's "recv mb1"
    CHECK(error_of(doc) ==
          "t.json: rank 1 node 5 (send mb1): send to rank 5 with tag 1 has no matching receive on rank 5");
  }
  SECTION("a receive without its send") {
    json doc = sample("tp4-pp2-trn1.json");
    nodes(doc, 6)[0]["tag"] = 7;
    CHECK(error_of(doc) == "t.json: rank 6 node 0 (recv mb0): receive from rank 2 with tag 7 has no matching send");
  }
  SECTION("collective members that disagree on the size") {
    json doc = sample("dp4-trn1.json");
    nodes(doc, 3)[4]["bytes"] = 4194304;
    CHECK(error_of(doc) == "t.json: rank 3 node 4 (grad bucket 1): collective call 1 on group 0 is all-reduce of 4194304 "
                           "bytes here but all-reduce of 8388608 bytes on rank 0 node 4");
  }
  SECTION("collective members that disagree on the type") {
    json doc = sample("dp4-trn1.json");
    nodes(doc, 1)[2]["op"] = "all-gather";
    CHECK_THAT(error_of(doc), Catch::StartsWith("t.json: rank 1 node 2 (grad bucket 0): collective call 0 on group 0 is "
                                                "all-gather of 8388608 bytes here but all-reduce"));
  }
  SECTION("a member missing from a call") {
    json doc = sample("dp4-trn1.json");
    nodes(doc, 3).erase(4);  // rank 3 skips bucket 1
    nodes(doc, 3)[4]["deps"] = {2, 3};
    CHECK(error_of(doc) == "t.json: rank 0 node 4: collective on group 0 has 3 of its 4 members in this trace; rank 3 "
                           "has fewer collectives on that group (members must make the same calls in the same order)");
  }
  SECTION("a collective on a group its rank is not in (members disagree on the group)") {
    json doc = sample("tp4-pp2-trn1.json");
    nodes(doc, 0)[1]["group"] = 1;
    CHECK(error_of(doc) ==
          "t.json: rank 0 node 1 (tp all-reduce mb0): rank 0 is not a member of the first group of group 1 (4,5,6,7)");
  }
  SECTION("a group naming a rank that does not exist") {
    json doc = sample("dp4-trn1.json");
    doc["groups"][0]["ranks"] = {0, 1, 2, 9};
    CHECK(error_of(doc) == "t.json: group 0: rank 9 does not exist (expected ranks 0 to 3)");
  }
  SECTION("a node of a rank that does not exist") {
    json doc = sample("dp4-trn1.json");
    doc["ranks"][3]["rank"] = 4;
    CHECK(error_of(doc) == "t.json: rank 4 does not exist (expected 0 to 3)");
  }
  SECTION("bad JSON: the path, what was expected and what was found") {
    json doc = sample("dp4-trn1.json");
    nodes(doc, 1)[1]["dep"] = {0};
    CHECK_THAT(error_of(doc), Catch::StartsWith("t.json: /ranks/1/nodes/1: expected one of the keys id, name, kind"));
    CHECK_THAT(error_of(doc), Catch::EndsWith("found unknown key \"dep\""));
    doc = sample("dp4-trn1.json");
    nodes(doc, 2)[0]["kind"] = "comp";
    CHECK(error_of(doc) == "t.json: /ranks/2/nodes/0/kind: expected one of compute, collective, send, recv, found \"comp\"");
    doc = sample("dp4-trn1.json");
    doc["works"][1]["duration_us"] = -5;
    CHECK(error_of(doc) == "t.json: /works/1/duration_us: expected a finite number >= 0, found -5");
    doc = sample("dp4-trn1.json");
    doc["groups"][0].erase("ranks");  // was nlohmann's out_of_range, exit 3 (found by fuzz_trace)
    CHECK(error_of(doc) == "t.json: /groups/0: expected the key \"ranks\", found none");
    doc = sample("dp4-trn1.json");
    doc["version"] = 2;
    CHECK(error_of(doc) == "t.json: /version: expected format version 1 (this trnsim reads version 1), found 2");
  }
}
