// The Chrome trace writer on small simulated steps: the file is JSON a trace viewer accepts
// (complete events that never overlap on a thread, named processes and threads, paired flow
// events), it covers the step, and it shows the ranks asked for.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "trnsim/config/experiment.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/error.hpp"
#include "trnsim/report/writers/chrome_trace.hpp"
#include "../config/support.hpp"

using namespace trnsim;
using nlohmann::json;
using trnsim::test::input_error;

namespace {

// A 2-layer decoder on one trn1.32xlarge (32 ranks) as TP 4 x PP 2 x DP 4, rank order tp,dp,pp:
// rank = tp_i + 4 (dp_i + 4 pp_i), so stage 0 holds ranks 0-15 and stage 1 ranks 16-31. Global
// batch 8 over DP 4 with micro-batch 1: 2 micro-batches per pipeline.
json pipeline_experiment() {
  return json::parse(R"({
    "name": "trace-test",
    "cluster": {"instance": "trn1.32xlarge", "count": 1},
    "model": {"name": "tiny-decoder", "layers": 2, "hidden": 256, "heads": 4, "kv_heads": 4, "ffn_hidden": 1024,
              "vocab": 1024, "mlp": "gelu", "norm": "layernorm"},
    "training": {"seq_len": 128, "global_batch": 8, "micro_batch": 1, "dtype": "bf16", "optimizer": "adamw"},
    "parallelism": {"tp": 4, "pp": 2, "dp": 4, "sequence_parallel": true, "zero": 1, "schedule": "1f1b",
                    "recompute": "selective"}
  })");
}

struct Traced {
  replay::StepInput input;
  replay::StepRun run;
};

Traced simulate(bool symmetric = true, const std::vector<std::string>& overrides = {}) {
  const config::Experiment ex = config::parse_experiment(pipeline_experiment(), "trace-test", overrides);
  Traced t;
  t.input = config::step_input(ex);
  t.input.symmetric = symmetric;
  t.run = replay::simulate_step(t.input);
  return t;
}

std::string trace_text(const Traced& t, const report::TraceOptions& o = {}) {
  std::ostringstream s;
  report::write_chrome_trace(s, t.input, t.run, o);
  return s.str();
}

std::vector<json> events_of(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph) out.push_back(e);
  }
  return out;
}

// pids named by process_name metadata, the network process (pid = ranks, counters only) left out.
std::set<int> rank_pids(const json& trace, int ranks) {
  std::set<int> pids;
  for (const json& e : events_of(trace, "M")) {
    if (e.at("name") == "process_name" && e.at("pid").get<int>() != ranks) pids.insert(e.at("pid").get<int>());
  }
  return pids;
}

}  // namespace

TEST_CASE("chrome trace: complete events have dur >= 0 and never overlap on one thread") {
  for (const bool flow : {false, true}) {
    INFO("network " << (flow ? "flow" : "analytic"));
    const Traced t = simulate(true, flow ? std::vector<std::string>{"network.model=flow"} : std::vector<std::string>{});
    const json trace = json::parse(trace_text(t));
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> threads;
    for (const json& e : events_of(trace, "X")) {
      const double ts = e.at("ts"), dur = e.at("dur");
      CHECK(ts >= 0);
      CHECK(dur >= 0);
      threads[{e.at("pid"), e.at("tid")}].emplace_back(ts, ts + dur);
    }
    REQUIRE(!threads.empty());
    // A stream runs one task at a time, so on each (pid, tid) the next event starts no earlier
    // than the previous one ends. Times are exact picoseconds printed in us; ts + dur in double
    // may exceed the exact end by a rounding error far below 1 ps (1e-6 us).
    for (auto& [thread, spans] : threads) {
      std::sort(spans.begin(), spans.end());
      for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second - 1e-7);
    }
  }
}

TEST_CASE("chrome trace: default selection shows every task once and ends at the step time") {
  const Traced t = simulate();
  const json trace = json::parse(trace_text(t));
  const auto x = events_of(trace, "X");
  // Symmetric: the simulated ranks are exactly the stage representatives (ranks 0 and 16), so the
  // default selection holds every task of the graph, each as one X event.
  REQUIRE(t.run.graph.simulated_ranks == std::vector<std::int32_t>{0, 16});
  CHECK(x.size() == t.run.graph.tasks.size());
  std::set<std::uint32_t> ids;
  double latest = 0;
  for (const json& e : x) {
    ids.insert(e.at("args").at("task").get<std::uint32_t>());
    latest = std::max(latest, e.at("ts").get<double>() + e.at("dur").get<double>());
  }
  CHECK(ids.size() == x.size());
  // Timeline::step_time is the latest end of any task; here every task is in the trace.
  CHECK(latest == Approx(t.run.timeline.step_time.to_us()).epsilon(1e-12));
  CHECK(trace.at("otherData").at("trnsim").at("step_time_us").get<double>() ==
        Approx(t.run.timeline.step_time.to_us()));
}

TEST_CASE("chrome trace: default selection is one rank per pipeline stage, and says so") {
  for (const bool symmetric : {true, false}) {
    INFO("symmetric " << symmetric);
    const Traced t = simulate(symmetric);
    const json trace = json::parse(trace_text(t));
    // rank = tp_i + 4 (dp_i + 4 pp_i): the TP 0, DP 0 rank of stage 0 is 0, of stage 1 is 16.
    CHECK(rank_pids(trace, 32) == std::set<int>{0, 16});
    const json& meta = trace.at("otherData").at("trnsim");
    CHECK_THAT(meta.at("rank_selection").get<std::string>(), Catch::StartsWith("default: one representative rank per pipeline stage"));
    CHECK(meta.at("traced_ranks") == json::array({0, 16}));
  }
}

TEST_CASE("chrome trace: a requested rank that was not simulated is shown as its stage's representative") {
  const Traced t = simulate();
  SECTION("ranks 5 and 17 are in stages 0 and 1: traced as ranks 0 and 16") {
    const json trace = json::parse(trace_text(t, {{5, 17}}));
    CHECK(rank_pids(trace, 32) == std::set<int>{0, 16});
    CHECK(trace.at("otherData").at("trnsim").at("requested_ranks") == json::array({5, 17}));
  }
  SECTION("ranks 1-15 are all stage 0: only rank 0 is traced, and no flow leaves it") {
    std::vector<std::int32_t> stage0;
    for (std::int32_t r = 1; r < 16; ++r) stage0.push_back(r);
    const json trace = json::parse(trace_text(t, {stage0}));
    CHECK(rank_pids(trace, 32) == std::set<int>{0});
    for (const json& e : events_of(trace, "X")) CHECK(e.at("pid") == 0);
    // Its sends go to rank 16, which is not traced.
    CHECK(events_of(trace, "s").empty());
  }
  SECTION("a full (not symmetric) run traces rank 5 itself") {
    const Traced full = simulate(false);
    const json trace = json::parse(trace_text(full, {{5}}));
    CHECK(rank_pids(trace, 32) == std::set<int>{5});
  }
  SECTION("a rank outside the cluster is an input error") {
    CHECK_THAT(input_error([&] { trace_text(t, {{32}}); }), Catch::Contains("--trace-ranks: expected ranks in [0, 32)"));
  }
}

TEST_CASE("chrome trace: every pipeline send has a flow start and a matching finish on the receiver") {
  const Traced t = simulate();
  const json trace = json::parse(trace_text(t));
  const auto starts = events_of(trace, "s");
  const auto finishes = events_of(trace, "f");
  // PP 2, 2 micro-batches: each sends its activation 0 -> 16 and its gradient 16 -> 0: 4 sends.
  CHECK(starts.size() == 4);
  std::map<std::uint64_t, json> by_id;
  for (const json& f : finishes) {
    CHECK(f.at("bp") == "e");
    CHECK(by_id.emplace(f.at("id").get<std::uint64_t>(), f).second);
  }
  CHECK(finishes.size() == starts.size());
  for (const json& s : starts) {
    const auto it = by_id.find(s.at("id").get<std::uint64_t>());
    REQUIRE(it != by_id.end());
    const json& f = it->second;
    CHECK(f.at("name") == s.at("name"));
    CHECK(f.at("cat") == s.at("cat"));
    CHECK(f.at("pid") != s.at("pid"));  // the other stage
    CHECK(f.at("ts").get<double>() >= s.at("ts").get<double>());
  }
}

TEST_CASE("chrome trace: metadata names every process and thread that events use") {
  const Traced t = simulate();
  const json trace = json::parse(trace_text(t));
  std::set<int> named_pids;
  std::set<std::pair<int, int>> named_threads;
  for (const json& e : events_of(trace, "M")) {
    if (e.at("name") == "process_name") named_pids.insert(e.at("pid").get<int>());
    if (e.at("name") == "thread_name") named_threads.insert({e.at("pid").get<int>(), e.at("tid").get<int>()});
  }
  std::size_t checked = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M") continue;
    CHECK(named_pids.count(e.at("pid").get<int>()) == 1);
    if (e.contains("tid")) CHECK(named_threads.count({e.at("pid").get<int>(), e.at("tid").get<int>()}) == 1);
    ++checked;
  }
  CHECK(checked > t.run.graph.tasks.size());
  // Rank 16's compute stream: tid = 10 x 16 + 0 + 1.
  CHECK(named_threads.count({16, 161}) == 1);
}

TEST_CASE("chrome trace: a send's busbw counter is its bytes over its time on the network") {
  const Traced t = simulate();
  const json trace = json::parse(trace_text(t));
  std::map<int, std::vector<std::pair<double, json>>> samples;  // per pid, in file (= time) order
  for (const json& c : events_of(trace, "C")) {
    if (c.at("name") == "busbw GB/s") samples[c.at("pid").get<int>()].emplace_back(c.at("ts").get<double>(), c.at("args"));
  }
  REQUIRE(!samples.empty());
  std::size_t sends = 0;
  for (const json& x : events_of(trace, "X")) {
    if (x.at("name") != "pp send") continue;
    // A send starts on the network wait_us after its X event starts and ends with it: its rate
    // is bytes / (dur - wait_us); bytes per us / 1e3 = GB/s (10^9 bytes/s).
    const json& a = x.at("args");
    const double net_us = x.at("dur").get<double>() - a.at("wait_us").get<double>();
    const double ts = x.at("ts").get<double>() + a.at("wait_us").get<double>();
    const auto& rank = samples[x.at("pid").get<int>()];
    const auto it = std::find_if(rank.begin(), rank.end(), [&](const auto& p) { return std::abs(p.first - ts) < 1e-7; });
    REQUIRE(it != rank.end());
    CHECK(it->second.at("pp").get<double>() == Approx(a.at("bytes").get<double>() / net_us / 1e3));
    ++sends;
  }
  CHECK(sends == 4);
  // At the end of the step nothing is in flight: the last sample of each rank is all zeros.
  for (const auto& [pid, rank] : samples) {
    for (const auto& [stream, value] : rank.back().second.items()) CHECK(value.get<double>() == 0);
  }
}

TEST_CASE("chrome trace: the same run gives byte-identical files") {
  const Traced a = simulate(), b = simulate();
  CHECK(trace_text(a) == trace_text(b));
  CHECK(trace_text(a, {{3, 20}}) == trace_text(b, {{3, 20}}));
}

TEST_CASE("chrome trace: --trace-ranks lists parse into ascending unique ranks") {
  using V = std::vector<std::int32_t>;
  CHECK(report::parse_rank_list("0-7,128", 256) == V{0, 1, 2, 3, 4, 5, 6, 7, 128});
  CHECK(report::parse_rank_list("5", 8) == V{5});
  CHECK(report::parse_rank_list(" 3 , 1-2,2", 8) == V{1, 2, 3});
  CHECK(report::parse_rank_list("7-7,0", 8) == V{0, 7});
  CHECK(report::parse_rank_list("0-1023", 1024).size() == 1024);
}

TEST_CASE("chrome trace: bad --trace-ranks lists are input errors that say what was expected") {
  for (const char* bad : {"", " ", "a", "1-", "-1", "1,,2", "1.5", "1-2-3", "0x3", "+4", "2 3"}) {
    INFO("'" << bad << "'");
    CHECK_THAT(input_error([&] { report::parse_rank_list(bad, 8); }),
               Catch::StartsWith("--trace-ranks: expected a comma-separated list"));
  }
  CHECK_THAT(input_error([] { report::parse_rank_list("3-1", 8); }), Catch::Contains("FIRST <= LAST, found \"3-1\""));
  CHECK_THAT(input_error([] { report::parse_rank_list("0-8", 8); }), Catch::Contains("[0, 8)"));
  CHECK_THAT(input_error([] { report::parse_rank_list("99999999999999999999", 8); }), Catch::Contains("[0, 8)"));
}
