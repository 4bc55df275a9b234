// Chakra traces end to end: the samples in traces/chakra (written by `export-trace --format chakra`
// and `chakra-json` from traces/tp4-pp2-trn1.json), a round trip, and the broken-file catalogue.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace_run.hpp"

using namespace trnsim::test;
using nlohmann::json;

namespace {

const fs::path kTraces = fs::path(TRNSIM_TEST_SOURCE_DIR) / "traces";

double step_of(const std::string& args) { return run_json(args)["results"]["step_time_s"].get<double>(); }

// An experiment on one trn1.32xlarge whose workload is the trace at `trace`.
fs::path experiment(const fs::path& trace) {
  const fs::path ex = scratch("experiment.json");
  std::ofstream(ex) << json{{"cluster", {{"instance", "trn1.32xlarge"}, {"count", 1}}}, {"workload", {{"trace", trace.string()}}}}.dump();
  return ex;
}

// Copies the Chakra sample's files with extension `ext` (and the group file) under a new prefix.
fs::path copy_sample(const std::string& ext) {
  const fs::path dir = scratch("chakra");
  fs::create_directories(dir);
  for (int r = 0; r < 8; ++r)
    fs::copy_file(kTraces / "chakra" / ("tp4-pp2-trn1." + std::to_string(r) + ext), dir / ("t." + std::to_string(r) + ext));
  fs::copy_file(kTraces / "chakra" / "tp4-pp2-trn1.groups.json", dir / "t.groups.json");
  return dir / "t";
}

}  // namespace

TEST_CASE("chakra: the binary and JSON samples replay as the trnsim trace they were written from") {
  // The step is derived by hand in trace_samples_cli_test.cpp (3 F + 3 A + S); the Chakra files
  // carry the same measured times, groups, sizes and tags, so the same picoseconds.
  const double trnsim_step = step_of("run '" + (kTraces / "tp4-pp2-trn1.experiment.json").string() + "'");
  CHECK(step_of("run '" + (kTraces / "chakra" / "tp4-pp2-trn1.experiment.json").string() + "'") == trnsim_step);
  const fs::path json_prefix = copy_sample(".json");
  CHECK(step_of("run '" + experiment(json_prefix).string() + "'") == trnsim_step);
  fs::remove_all(json_prefix.parent_path());
}

TEST_CASE("chakra: export-trace --format chakra round-trips the DP sample (FLOP and measured nodes alike)") {
  const fs::path dir = scratch("chakra-rt");
  fs::create_directories(dir);
  const auto e = run("export-trace '" + (kTraces / "dp4-trn1.experiment.json").string() + "' --format chakra -o '" +
                     (dir / "dp").string() + "'");
  INFO(e.err);
  REQUIRE(e.code == 0);
  for (const char* f : {"dp.0.et", "dp.1.et", "dp.2.et", "dp.3.et", "dp.groups.json"}) CHECK(fs::exists(dir / f));
  CHECK(step_of("run '" + experiment(dir / "dp").string() + "'") ==
        step_of("run '" + (kTraces / "dp4-trn1.experiment.json").string() + "'"));
  // A symmetric model step has replicas, which Chakra cannot say.
  const auto sym = run("export-trace '" + example("tiny-trn1.json") + "' --format chakra -o '" + (dir / "tiny").string() + "'");
  CHECK(sym.code == 2);
  CHECK_THAT(sym.err, Catch::Contains("export it with --all-ranks"));
  fs::remove_all(dir);
}

TEST_CASE("chakra: a context-parallel step exports its ring steps and replays as its trnsim JSON export") {
  // The tiny example with tp 1 and cp 2 on its 2 ranks; every rank its own nodes.
  const fs::path dir = scratch("chakra-cp");
  fs::create_directories(dir);
  json ex = json::parse(slurp(example("tiny-trn1.json")));
  ex["parallelism"]["tp"] = 1;
  ex["parallelism"]["cp"] = 2;
  std::ofstream(dir / "cp.json") << ex.dump();
  const std::string export_cmd = "export-trace '" + (dir / "cp.json").string() + "' --all-ranks -o '";
  const auto c = run(export_cmd + (dir / "cp").string() + "' --format chakra-json");
  INFO(c.err);
  REQUIRE(c.code == 0);
  // Ring steps per rank: per layer and micro-batch 1 in the forward (cp - 1) and 3 in the backward
  // (K/V of block 1, dK/dV of block 0, the last dK/dV home: context_steps.hpp), 2 layers x 8
  // micro-batches (global batch 8 of 1): 64 sends, and the ring neighbour's 64 as recvs.
  for (const char* f : {"cp.0.json", "cp.1.json"}) {
    const std::string text = slurp(dir / f);
    const auto count = [&](const std::string& needle) {
      std::size_t n = 0;
      for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
      return n;
    };
    CHECK(count("\"COMM_SEND_NODE\"") == 64);
    CHECK(count("\"COMM_RECV_NODE\"") == 64);
  }
  // The trnsim JSON export, with each work reduced to what Chakra keeps (one kernel of its FLOPs
  // and HBM bytes, as the Chakra reader makes it), replays to the same picoseconds: the ring steps,
  // their groups and sizes, and the DP calls' stream survive the Chakra round trip.
  const auto j = run(export_cmd + (dir / "cp.trace.json").string() + "'");
  INFO(j.err);
  REQUIRE(j.code == 0);
  json trace = json::parse(slurp(dir / "cp.trace.json"));
  for (json& w : trace["works"]) {
    double flops = 0, bytes = 0;
    for (const json& k : w["kernels"]) {
      flops += k.value("flops", 0.0);
      bytes += k.value("hbm_bytes", 0.0);
    }
    w["kernels"] = json::array({json{{"op", flops > 0 ? "matmul" : "elementwise"},
                                     {"flops", std::llround(flops)},
                                     {"hbm_bytes", std::llround(bytes)}}});
  }
  std::ofstream(dir / "coarse.json") << trace.dump();
  CHECK(step_of("run '" + experiment(dir / "cp").string() + "'") ==
        step_of("run '" + experiment(dir / "coarse.json").string() + "'"));
  fs::remove_all(dir);
}

TEST_CASE("chakra: broken files exit 2 naming the file, the message or the node") {
  SECTION("a truncated file") {
    const fs::path prefix = copy_sample(".et");
    const fs::path f = prefix.string() + ".3.et";
    const std::string bytes = slurp(f);
    std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 5);
    const auto r = run("run '" + experiment(prefix).string() + "'");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(f.string() + ": message 6 at byte"));
    CHECK_THAT(r.err, Catch::Contains("(the file is truncated; rank 3, after node "));
    fs::remove_all(prefix.parent_path());
  }
  SECTION("a length varint that never ends") {
    const fs::path prefix = copy_sample(".et");
    const fs::path f = prefix.string() + ".0.et";
    std::ofstream(f, std::ios::binary | std::ios::trunc) << std::string(6, '\xff');
    const auto r = run("run '" + experiment(prefix).string() + "'");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(f.string() + ": message 0 at byte 0: expected a length (base-128 varint)"));
    fs::remove_all(prefix.parent_path());
  }
  SECTION("an unsupported collective type names the node") {
    const fs::path prefix = copy_sample(".json");
    const fs::path f = prefix.string() + ".2.json";
    std::string text = slurp(f);
    const std::string all_reduce = R"({"name":"comm_type","int64Val":"0"})";
    REQUIRE(text.find(all_reduce) != std::string::npos);
    text.replace(text.find(all_reduce), all_reduce.size(), R"({"name":"comm_type","int64Val":"1"})");  // REDUCE
    std::ofstream(f, std::ios::trunc) << text;
    const auto r = run("run '" + experiment(prefix).string() + "'");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(f.string() + ": rank 2 node 6 (collective): collective type REDUCE (1) is not supported"));
    fs::remove_all(prefix.parent_path());
  }
  SECTION("ignored nodes: a summary line, the list with -v") {
    const fs::path prefix = copy_sample(".json");
    std::ofstream(prefix.string() + ".5.json", std::ios::app) << R"({"id":"99","name":"step marker","type":"METADATA_NODE"})" << "\n";
    const fs::path ex = experiment(prefix);
    const auto r = run("run '" + ex.string() + "'");
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("1 nodes ignored or rejected (-v lists them)"));
    CHECK_THAT(r.out, Catch::Contains("41 nodes, 16 kept a measured time, 1 ignored"));
    const auto v = run("-v run '" + ex.string() + "'");
    CHECK_THAT(v.err, Catch::Contains("rank 5 node 99 (step marker): a METADATA_NODE (not replayed)"));
    fs::remove_all(prefix.parent_path());
  }
}

TEST_CASE("chakra: an export that cannot write one rank's file leaves none of its files and no temporary") {
  // dp4-trn1 has 4 ranks: dp.0.et ... dp.3.et and dp.groups.json. A directory named dp.2.et makes
  // the third file impossible to write (a file is not renamed onto a directory); the two written
  // before it are removed, so no mix of this export and an older one is left. Both encodings.
  for (const std::string format : {"chakra", "chakra-json"}) {
    const std::string ext = format == "chakra" ? ".et" : ".json";
    const fs::path dir = scratch("chakra-fail");
    fs::create_directories(dir / ("dp.2" + ext));
    const auto e = run("export-trace '" + (kTraces / "dp4-trn1.experiment.json").string() + "' --format " + format + " -o '" +
                       (dir / "dp").string() + "'");
    INFO(format << ": " << e.err);
    CHECK(e.code == 2);
    CHECK_THAT(e.err, Catch::Contains((dir / ("dp.2" + ext)).string() + ": cannot write the file: it is a directory"));
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().filename().string());
    CHECK(left == std::vector<std::string>{"dp.2" + ext});  // the directory only: no rank file, no .dp.*.tmp-*
    fs::remove_all(dir);
  }
}
