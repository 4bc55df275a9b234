// Fast-forward over the pipeline's steady state (replay/fast_forward.hpp,
// report/analysis/fast_forward.hpp) against the full replay of every micro-batch: the same step
// time in picoseconds, the same figures within rounding, on every example and validation file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "trnsim/config/experiment.hpp"
#include "trnsim/error.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/replay/fast_forward.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/report/analysis/fast_forward.hpp"
#include "trnsim/report/analysis/step_report.hpp"

namespace fs = std::filesystem;
using namespace trnsim;

namespace {

std::vector<fs::path> json_files(const char* dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

fs::path example(const char* name) { return fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples" / name; }

// An experiment file, with overrides, as the replay takes it.
struct Loaded {
  replay::StepInput input;
  workload::ResolvedPlan resolved;
};
Loaded load(const fs::path& file, const std::vector<std::string>& overrides = {}) {
  const config::Experiment ex = config::load_experiment(file.string(), overrides);
  replay::StepInput input = config::step_input(ex);
  workload::ResolvedPlan resolved = replay::resolve_plan(input);
  return {std::move(input), std::move(resolved)};
}

// Equal within `rel` of the larger magnitude (two zeros are equal).
bool close(double a, double b, double rel = 1e-9) {
  return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

// The bottleneck rank's figures besides its breakdown: op-class, HBM-bound, MoE and CP seconds.
void check_per_rank_figures(const report::StepReport& got, const report::StepReport& want) {
  for (std::size_t o = 0; o < want.op_seconds.size(); ++o) CHECK(close(got.op_seconds[o], want.op_seconds[o]));
  for (std::size_t o = 0; o < want.hbm_bound_s.size(); ++o) {
    CHECK(close(got.hbm_bound_s[o], want.hbm_bound_s[o]));
    CHECK(close(got.hbm_excess_s[o], want.hbm_excess_s[o]));
  }
  CHECK(close(got.ideal_compute_s, want.ideal_compute_s));
  CHECK(close(got.ep_all_to_all_s, want.ep_all_to_all_s));
  CHECK(close(got.expert_compute_s, want.expert_compute_s));
  CHECK(close(got.cp_exposed_s, want.cp_exposed_s));
}

// What every fast-forwarded report must give as the full replay does: the step time exactly, the
// bottleneck and its figures within rounding, counts exactly, the links and the findings.
void check_moved_figures(const report::StepReport& got, const report::StepReport& want) {
  CHECK(got.step_time_s == want.step_time_s);
  CHECK(got.breakdown.rank == want.breakdown.rank);
  for (std::size_t p = 0; p < want.breakdown.seconds.size(); ++p) {
    INFO("breakdown part " << p);
    CHECK(close(got.breakdown.seconds[p], want.breakdown.seconds[p]));
  }
  // Counts are integers: exact.
  CHECK(got.tasks == want.tasks);
  CHECK(got.events == want.events);
  for (std::size_t e = 0; e < want.engine_busy.size(); ++e) CHECK(close(got.engine_busy[e], want.engine_busy[e]));
  check_per_rank_figures(got, want);
  CHECK(close(got.hardware_flops, want.hardware_flops));
  REQUIRE(got.stage_compute_s.size() == want.stage_compute_s.size());
  for (std::size_t s = 0; s < want.stage_compute_s.size(); ++s) CHECK(close(got.stage_compute_s[s], want.stage_compute_s[s]));
  REQUIRE(got.links.kinds.size() == want.links.kinds.size());
  for (std::size_t k = 0; k < want.links.kinds.size(); ++k) CHECK(close(got.links.kinds[k].bytes, want.links.kinds[k].bytes));
  REQUIRE(got.findings.size() == want.findings.size());
  for (std::size_t f = 0; f < want.findings.size(); ++f) CHECK(got.findings[f].rule == want.findings[f].rule);
}

struct Compared {
  std::string file;
  bool fast_forwarded = false;
  bool derived = false;  // M1 derived from M2, not replayed (replay::derive_first)
};

// Each task's span under a key that does not depend on task ids: (rank, micro-batch, kind,
// stream, category, layer, work or call description), then the order the graph lists them in.
using SpanKey = std::tuple<std::int32_t, std::int32_t, int, int, int, std::int32_t, std::uint32_t, std::int32_t, double>;
std::map<SpanKey, std::vector<replay::Span>> spans_by_key(const workload::StepGraph& g, const replay::Timeline& tl) {
  std::map<SpanKey, std::vector<replay::Span>> out;
  for (std::size_t t = 0; t < g.tasks.size(); ++t) {
    const workload::Task& k = g.tasks[t];
    out[{k.rank, k.micro_batch, static_cast<int>(k.kind), static_cast<int>(k.stream), static_cast<int>(k.category),
         k.layer, k.index, k.peer, k.bytes}]
        .push_back(tl.spans[t]);
  }
  return out;
}

// A derived M1 against M1 replayed: every task's span to the picosecond, the step time, the
// event count, and every link's bytes and busy time. The replay is the reference: derive_first
// and cut_first claim that M1 is M2 with one period cut out. Tasks are matched by what they are,
// not by id: cut_first lists M2's tasks rank by rank and stream by stream.
void check_derived_first(const replay::StepRun& replayed, const replay::StepRun& first) {
  const auto& want = replayed.timeline;
  const auto& got = first.timeline;
  CHECK(got.step_time.picoseconds() == want.step_time.picoseconds());
  CHECK(got.events == want.events);
  REQUIRE(first.graph.tasks.size() == replayed.graph.tasks.size());
  const auto a = spans_by_key(first.graph, got), b = spans_by_key(replayed.graph, want);
  REQUIRE(a.size() == b.size());
  std::size_t differ = 0;
  for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
    REQUIRE(x->first == y->first);
    REQUIRE(x->second.size() == y->second.size());
    for (std::size_t i = 0; i < x->second.size(); ++i) {
      const auto& s = x->second[i];
      const auto& r = y->second[i];
      differ += s.start != r.start || s.active != r.active || s.end != r.end ? 1u : 0u;
    }
  }
  CHECK(differ == 0);
  const auto& runs_first = first;
  REQUIRE(runs_first.links.size() == replayed.links.size());
  for (std::size_t i = 0; i < replayed.links.size(); ++i) {
    INFO("link " << replayed.links[i].id);
    CHECK(runs_first.links[i].id == replayed.links[i].id);
    CHECK(close(runs_first.links[i].bytes, replayed.links[i].bytes, 1e-12));
    CHECK(close(runs_first.links[i].busy_s, replayed.links[i].busy_s, 1e-12));
  }
}

// The file's plan replayed in full and fast-forwarded: the fast-forward, where it applies, must
// give the full replay's step time exactly and its other figures within rounding.
Compared compare_file(const fs::path& file, const std::vector<std::string>& overrides = {}) {
  INFO(file.string());
  const auto [input, resolved] = load(file, overrides);
  replay::StepRun full = replay::prepare_step(input, resolved);
  replay::replay_step(input, full);
  const report::StepReport want = report::analyze(input, full);

  Compared out{file.filename().string(), false};
  const auto shape = replay::fast_forward_shape(input, resolved);
  if (!shape) return out;
  const auto runs = replay::fast_forward_runs(input, resolved, *shape);
  if (!runs) return out;
  const auto got = report::extrapolate_report(input, resolved, *runs);
  REQUIRE(got.has_value());
  out.fast_forwarded = true;
  out.derived = runs->derived;
  replay::StepRun m1;  // M1 replayed, where derived: the reference for both derivations
  if (runs->derived) {
    m1 = replay::prepare_step(input, runs->first.resolved);
    replay::replay_step(input, m1);
    check_derived_first(m1, runs->first);
  }
  CHECK(shape->reduced + shape->periods * shape->period == full.plan.micro_batches);
  CHECK(runs->step_time.picoseconds() == full.timeline.step_time.picoseconds());
  check_moved_figures(*got, want);
  CHECK(got->critical_path.segment_count == want.critical_path.segment_count);
  for (std::size_t c = 0; c < want.critical_path.seconds.size(); ++c) {
    INFO("critical path category " << c);
    CHECK(close(got->critical_path.seconds[c], want.critical_path.seconds[c], 1e-6));
  }
  REQUIRE(got->critical_path.top.size() == want.critical_path.top.size());
  for (std::size_t i = 0; i < want.critical_path.top.size(); ++i) {
    CHECK(got->critical_path.top[i].name == want.critical_path.top[i].name);
    CHECK(got->critical_path.top[i].count == want.critical_path.top[i].count);
  }
  CHECK(close(got->mfu, want.mfu));
  // From the real plan, not extrapolated.
  CHECK(got->plan.micro_batches == want.plan.micro_batches);
  REQUIRE(got->memory.size() == want.memory.size());
  for (std::size_t s = 0; s < want.memory.size(); ++s)
    CHECK(got->memory[s].memory.total() == want.memory[s].memory.total());

  // As a sweep asks (no critical path): M1 cut from M2 where derived, not built.
  const report::AnalyzeOptions sweep{.critical_path = false, .bottleneck_rank = std::nullopt};
  const auto cut = replay::fast_forward_runs(input, resolved, *shape, {}, replay::FirstGraph::TasksOnly);
  REQUIRE(cut.has_value());
  CHECK(cut->derived == runs->derived);
  CHECK(cut->first_graph == (cut->derived ? replay::FirstGraph::TasksOnly : replay::FirstGraph::Full));
  if (cut->first_graph == replay::FirstGraph::TasksOnly) check_derived_first(m1, cut->first);
  const auto moved = report::extrapolate_report(input, resolved, *cut, sweep);
  REQUIRE(moved.has_value());
  check_moved_figures(*moved, want);
  // Its reduced run has no edges for a critical path: asking for one is refused.
  if (cut->first_graph == replay::FirstGraph::TasksOnly)
    CHECK_THROWS_AS(report::extrapolate_report(input, resolved, *cut), InternalError);
  return out;
}

std::vector<Compared> compare_dir(const char* dir) {
  std::vector<Compared> out;
  for (const fs::path& file : json_files(dir)) out.push_back(compare_file(file));
  return out;
}

bool fast_forwarded(const std::vector<Compared>& results, const std::string& name) {
  return std::any_of(results.begin(), results.end(),
                     [&](const Compared& c) { return c.file == name && c.fast_forwarded; });
}

std::size_t derived_count(const std::vector<Compared>& results) {
  return static_cast<std::size_t>(std::count_if(results.begin(), results.end(), [](const Compared& c) { return c.derived; }));
}

}  // namespace

TEST_CASE("fast forward: every example gives the full replay's step time in picoseconds") {
  const auto results = compare_dir("examples");
  REQUIRE(results.size() >= 5);
  // gpt3-175b-a100: 1f1b-interleaved, pp 8, 192 micro-batches per pipeline: d = 8, and a few
  // dozen micro-batches hold warm-up, a period and cool-down; its steady state repeats every
  // period, so it must fast-forward, not fall back. llama3.1-405b-trn2u fast-forwards over its
  // cycle of 14 micro-batches (below). On the analytic network every M1 is derived from its M2,
  // and compare_file checks each against M1 replayed.
  CHECK(fast_forwarded(results, "gpt3-175b-a100.json"));
  CHECK(fast_forwarded(results, "llama3.1-405b-trn2u.json"));
  CHECK(derived_count(results) == static_cast<std::size_t>(std::count_if(
                                      results.begin(), results.end(), [](const Compared& c) { return c.fast_forwarded; })));
}

TEST_CASE("fast forward: context parallelism under ZeRO-3 with 8 micro-batches, M1 derived both ways") {
  // llama3.1-70b-cp-trn2u has one micro-batch per pipeline; 128 sequences over dp 16 give 8 (pp 1:
  // M1 = 3, M2 = 4). Its K/V exchanges on the TP stream and ZeRO-3's gathers are cut out of M2
  // with their micro-batch like every task; the figures must still be the full replay's.
  const fs::path file = fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples" / "llama3.1-70b-cp-trn2u.json";
  const Compared c = compare_file(file, {"training.global_batch=128"});
  CHECK(c.fast_forwarded);
  CHECK(c.derived);
}

TEST_CASE("fast forward: replicas started one call per group are not derived, and still exact") {
  // With replicas not collapsed, a call on 8 groups is 8 engine events joined into one
  // completion: the events of the micro-batches cut out cannot be counted apart, so M1 is
  // replayed (the shape then needs room for both replays: 3 + 4 of 32 micro-batches).
  const config::Experiment ex = config::load_experiment(
      (fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples" / "llama3.1-8b-trn2.json").string());
  replay::StepInput input = config::step_input(ex);
  input.collapse_replicas = false;
  const workload::ResolvedPlan resolved = replay::resolve_plan(input);
  const auto shape = replay::fast_forward_shape(input, resolved);
  REQUIRE(shape.has_value());
  const auto runs = replay::fast_forward_runs(input, resolved, *shape, {}, replay::FirstGraph::TasksOnly);
  REQUIRE(runs.has_value());
  CHECK_FALSE(runs->derived);
  CHECK_FALSE(runs->second.timeline.set_aside);
  replay::StepRun full = replay::prepare_step(input, resolved);
  replay::replay_step(input, full);
  CHECK(runs->step_time.picoseconds() == full.timeline.step_time.picoseconds());
  // The executor's own guard, asked directly: the same 4-micro-batch replay with micro-batch 1
  // set aside counts it apart only where each event completes one call.
  for (const bool collapse : {true, false}) {
    INFO("collapse replicas " << collapse);
    input.collapse_replicas = collapse;
    replay::StepRun r = replay::prepare_step(input, replay::with_micro_batches(resolved, 4));
    r.aside = {1, 2, {}};
    replay::replay_step(input, r);
    CHECK(r.timeline.set_aside == collapse);
    CHECK((r.timeline.events_aside > 0) == collapse);
    CHECK(r.aside.links_without.empty() == !collapse);
  }
}

TEST_CASE("fast forward: every validation file gives the full replay's step time in picoseconds") {
  const auto results = compare_dir("validation");
  REQUIRE(results.size() >= 10);
  CHECK(std::count_if(results.begin(), results.end(), [](const Compared& c) { return c.fast_forwarded; }) > 0);
  CHECK(derived_count(results) > 0);
}

TEST_CASE("fast forward: every held-out validation file gives the full replay's step time in picoseconds") {
  const auto results = compare_dir("validation-heldout");
  REQUIRE(results.size() >= 4);
  CHECK(derived_count(results) > 0);
}

TEST_CASE("fast forward: on the flow network model, the same step time in picoseconds where it applies") {
  // The flow model's contention repeats as exactly as the analytic model's times on these two
  // (1F1B with pp 8 on trn1, and pp 1 on trn2); gpt3-175b-a100 on flow fails the check and falls
  // back (compare_file then only replays it in full).
  const fs::path dir = fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples";
  const Compared flow = compare_file(dir / "llama2-70b-trn1.json", {"network.model=flow"});
  CHECK(flow.fast_forwarded);
  CHECK_FALSE(flow.derived);  // a flow link's busy time is not a sum over calls: M1 is replayed
  // tp 1 and pp 1: the micro-batches cut out make no call at all, so nothing in the replay says
  // that the flow model cannot set calls aside; the executor asks before the first call.
  const Compared quiet = compare_file(dir / "tiny-trn1.json",
                                      {"network.model=flow", "parallelism.tp=1", "parallelism.dp=2", "training.global_batch=64"});
  CHECK(quiet.fast_forwarded);
  CHECK_FALSE(quiet.derived);
  CHECK(compare_file(dir / "llama3.1-8b-trn2.json", {"network.model=flow"}).fast_forwarded);
  // The 405B with 256 micro-batches repeats every 14 on flow too (the cycle its stage loads
  // foretell, as on the analytic model below): the full replay's step time and event count.
  CHECK(compare_file(dir / "llama3.1-405b-trn2u.json", {"network.model=flow", "training.global_batch=4096"})
            .fast_forwarded);
}

TEST_CASE("fast forward: 1f1b with pp 16 replays 48 and 49 micro-batches and checks 17 of them") {
  // Stage 0 of 1F1B with pp 16: 15 warm-up forwards, then F15 still before the first backward;
  // the trailing backwards start at B(M - 16) (after the last forward F(M-1) comes B(M-16)).
  // Later stages have fewer of each, so the steady micro-batches are [16, M - 16). The check
  // needs max(2 d, pp + d) = 17 of them in M2: M2 - 32 >= 17, M2 = 49, M1 = 48 (16 >= 1 steady).
  const auto [input, resolved] = load(example("llama3.1-405b-trn2u.json"));
  const auto shape = replay::fast_forward_shape(input, resolved);
  REQUIRE(shape.has_value());
  CHECK(shape->period == 1);
  CHECK(shape->reduced == 48);
  CHECK(shape->steady_lo == 16);
  CHECK(shape->steady_hi == 49 - 16);
  CHECK(shape->check_lo == 49 - 16 - 17);
  CHECK(shape->periods == shape->micro_batches - 48);
}

// llama3.1-405b-trn2u's 1F1B over 16 stages repeats every 14 micro-batches, not every one: in its
// full replay, stage 0's forwards follow each other 1.578256 s apart except one step in 14,
// 1.576810 s (F16 -> F17, F30 -> F31, ...). Checking two periods (M2 = 35) saw 1.578256 s and
// extrapolated 225.3763 s where the full replay gives 225.3677 s; the M2 replay checked now (49
// micro-batches, 16..32 checked) holds the shorter steps, so the check refuses. Its cycle of 14 is
// found in that check (steady_cycle), and foretold by the stage loads (predicted_cycle), so its
// shape is tried first: max(2 x 14, 16 + 14) = 30 micro-batches checked, so
// M2 - 32 >= 30, M1 >= 48 with 128's residue 2 modulo 14: M1 = 58, M2 = 72, 128 = 58 + 5 x 14.
// On the analytic network only M2 is replayed (M1 derived), and 72 < 128 leaves room; on the
// flow network both would be, and 58 + 72 > 128 leaves none: the full replay.
TEST_CASE("fast forward: a steady state that repeats only every 14 micro-batches fast-forwards over 14 from one replay") {
  const fs::path file = fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples" / "llama3.1-405b-trn2u.json";
  const Compared compared = compare_file(file);
  CHECK(compared.fast_forwarded);
  CHECK(compared.derived);
  const auto [input, resolved] = load(file);
  const auto shape = replay::fast_forward_shape(input, resolved);
  REQUIRE(shape.has_value());
  CHECK(shape->period == 1);
  const auto runs = replay::fast_forward_runs(input, resolved, *shape);
  REQUIRE(runs.has_value());
  CHECK(runs->derived);
  CHECK(runs->shape.period == 14);
  CHECK(runs->shape.reduced == 58);
  CHECK(runs->shape.periods == 5);
  CHECK(runs->shape.steady_lo == 16);
  CHECK(runs->shape.steady_hi == 72 - 16);
  CHECK(runs->shape.check_lo == 72 - 16 - 30);
  // The micro-batches cut out of M2 were set aside in its replay: the first period checked.
  CHECK(runs->second.aside.lo == 72 - 16 - 30);
  CHECK(runs->second.aside.hi == 72 - 16 - 30 + 14);
  // The 14 stages of 8 layers tie for the heaviest load (predicted_cycle, below): the cycle is
  // tried first, one replay of 72 micro-batches, not the failing 49 and then 72.
  CHECK(runs->replayed == 72);
}

// The split rule (workload/plan.hpp) gives chunks C-1-r .. C-2 one layer more than the q = L / C
// of the others, r = L mod C; with C = pp = 16 those r stages tie for the heaviest compute where a
// layer outweighs the LM head (Llama 3.1 405B: its last stage's forward is 376 us against 398 us
// for 8 layers in the full replay's trace), and here 1F1B then repeats every r micro-batches:
// L = 126: r = 14; 124: r = 12; 120: r = 8; 118: r = 6. With L = 128 (r = 0) every stage holds 8
// layers, the last one the LM head as well: it alone is the heaviest, no cycle foretold (from the
// layer counts alone). With L = 127 (r = 15) stages 0 to 14 hold 8, stage 0 the embedding as
// well: it alone is the heaviest (the one-micro-batch build decides). gpt3-175b-a100 interleaves
// (its period is already pp): none either.
TEST_CASE("fast forward: the stages tied for the heaviest load foretell the cycle the replay repeats over") {
  const fs::path dir = fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples";
  const auto predicted = [&](const char* file, const std::vector<std::string>& overrides) {
    const auto [input, resolved] = load(dir / file, overrides);
    const auto shape = replay::fast_forward_shape(input, resolved);
    REQUIRE(shape.has_value());
    return replay::predicted_cycle(input, resolved, *shape);
  };
  CHECK(predicted("llama3.1-405b-trn2u.json", {}) == 14);
  CHECK(predicted("llama3.1-405b-trn2u.json", {"model.layers=124"}) == 12);
  CHECK(predicted("llama3.1-405b-trn2u.json", {"model.layers=118"}) == 6);
  CHECK(predicted("llama3.1-405b-trn2u.json", {"model.layers=128"}) == 0);
  CHECK(predicted("llama3.1-405b-trn2u.json", {"model.layers=127"}) == 0);
  CHECK(predicted("gpt3-175b-a100.json", {}) == 0);
  // The prediction against what the replay shows: the schedule's own shape (49 micro-batches)
  // replayed, its check failed, and its steady micro-batches repeating every r (steady_cycle).
  for (const std::string layers : {"126", "124", "120", "118"}) {
    INFO(layers);
    const auto [input, resolved] = load(dir / "llama3.1-405b-trn2u.json", {"model.layers=" + layers});
    const auto shape = replay::fast_forward_shape(input, resolved);
    REQUIRE(shape.has_value());
    replay::StepRun second = replay::prepare_step(input, replay::with_micro_batches(resolved, shape->reduced + shape->period));
    replay::replay_step(input, second);
    CHECK_FALSE(replay::steady_period(*shape, second).has_value());
    CHECK(replay::steady_cycle(*shape, second) == replay::predicted_cycle(input, resolved, *shape));
  }
}

// A cycle tried first that the replay refuses: the cycle its replay does repeat over is tried
// next. The 405B forced to 12: 128 keeps residue 8 modulo 12, max(24, 16 + 12) = 28 checked, so
// M2 - 32 >= 28: M1 = 56, M2 = 68; its steady micro-batches [16, 52) repeat every 14, whose shape
// (M2 = 72) passes: 68 + 72 micro-batches replayed, the step time of the default path (which the
// test above compares with the full replay).
TEST_CASE("fast forward: a cycle refused by its check gives way to the one its replay repeats over") {
  const auto [input, resolved] = load(example("llama3.1-405b-trn2u.json"));
  const auto twelve = replay::fast_forward_shape(input, resolved, nullptr, 12);
  REQUIRE(twelve.has_value());
  CHECK(twelve->reduced == 56);
  const auto runs = replay::fast_forward_runs(input, resolved, *twelve);
  REQUIRE(runs.has_value());
  CHECK(runs->shape.period == 14);
  CHECK(runs->replayed == 68 + 72);
  const auto shape = replay::fast_forward_shape(input, resolved);
  REQUIRE(shape.has_value());
  const auto plain = replay::fast_forward_runs(input, resolved, *shape);
  REQUIRE(plain.has_value());
  CHECK(runs->step_time == plain->step_time);
}

TEST_CASE("fast forward: on the flow network, a cycle with no room for two replays falls back") {
  const auto [input, resolved] = load(example("llama3.1-405b-trn2u.json"), {"network.model=flow"});
  const auto shape = replay::fast_forward_shape(input, resolved);
  REQUIRE(shape.has_value());
  CHECK(shape->reduced == 48);
  std::string why;
  CHECK_FALSE(replay::fast_forward_shape(input, resolved, &why, 14).has_value());
  CHECK(why.find("two reduced replays of a 14-micro-batch cycle") != std::string::npos);
  CHECK_FALSE(replay::fast_forward_runs(input, resolved, *shape).has_value());
}

// With 256 micro-batches there is room for that cycle: the 49-micro-batch check would fail as
// above, its steady micro-batches [16, 33) repeating every 14 (steady_cycle); the stage loads
// foretell that cycle (below), and the plan is replayed with it as its period at once: max(2 x 14, 16 + 14) = 30 micro-batches checked, so M2 - 32 >= 30 with
// M1 keeping 256's residue 4 modulo 14: M1 = 60 (256 = 60 + 14 x 14), M2 = 74, steady [16, 58).
// The full replay's step time in picoseconds and its other figures (compare_file).
TEST_CASE("fast forward: a steady state that repeats every 14 micro-batches fast-forwards over 14 when there is room") {
  const fs::path file = fs::path(TRNSIM_TEST_SOURCE_DIR) / "configs" / "examples" / "llama3.1-405b-trn2u.json";
  const std::vector<std::string> overrides{"training.global_batch=4096"};  // 256 micro-batches of 1 x dp 16
  CHECK(compare_file(file, overrides).fast_forwarded);
  const auto [input, resolved] = load(file, overrides);
  const auto shape = replay::fast_forward_shape(input, resolved);
  REQUIRE(shape.has_value());
  CHECK(shape->period == 1);
  const auto runs = replay::fast_forward_runs(input, resolved, *shape);
  REQUIRE(runs.has_value());
  CHECK(runs->shape.period == 14);
  CHECK(runs->shape.base_period == 1);
  CHECK(runs->shape.reduced == 60);
  CHECK(runs->shape.periods == 14);
  CHECK(runs->shape.steady_lo == 16);
  CHECK(runs->shape.steady_hi == 74 - 16);
  CHECK(runs->shape.check_lo == 74 - 16 - 30);
  CHECK(runs->replayed == 74);  // the cycle foretold by the stage loads, tried first
  // A cycle not longer than the schedule's period is refused.
  CHECK_THROWS_AS(replay::fast_forward_shape(input, resolved, nullptr, 1), InternalError);
}

TEST_CASE("fast forward: a cycle that is not a multiple of the schedule's period is refused") {
  // gpt3-175b-a100 interleaves over 8 stages: its period is 8 micro-batches, and a cycle of 12
  // would cut a group of 8 in two.
  const auto [input, resolved] = load(example("gpt3-175b-a100.json"));
  CHECK_THROWS_AS(replay::fast_forward_shape(input, resolved, nullptr, 12), InternalError);
  CHECK_THROWS_AS(replay::fast_forward_shape(input, resolved, nullptr, 8), InternalError);
  const auto longer = replay::fast_forward_shape(input, resolved, nullptr, 16);
  REQUIRE(longer.has_value());
  CHECK(longer->period == 16);
  CHECK(longer->base_period == 8);
}

TEST_CASE("fast forward: gpipe falls back to the full replay and gives its answer") {
  const auto [input, resolved] = load(example("llama3.1-8b-trn2.json"), {"parallelism.schedule=gpipe", "parallelism.virtual_stages=1"});
  std::string why;
  CHECK_FALSE(replay::fast_forward_shape(input, resolved, &why).has_value());
  CHECK(why.find("gpipe") != std::string::npos);
  replay::StepRun full = replay::prepare_step(input, resolved);
  replay::replay_step(input, full);
  const report::StepReport got = report::simulate_and_analyze(input, resolved, true);
  CHECK_FALSE(got.fast_forward);
  CHECK(got.step_time_s == full.timeline.step_time.to_seconds());
}

TEST_CASE("fast forward: a task one picosecond off the period fails the repetition check") {
  const auto [input, resolved] = load(example("gpt3-175b-a100.json"));
  const auto shape = replay::fast_forward_shape(input, resolved);
  REQUIRE(shape.has_value());
  auto runs = replay::fast_forward_runs(input, resolved, *shape);
  REQUIRE(runs.has_value());
  CHECK(replay::steady_state_repeats(*shape, runs->first, runs->second, runs->period));
  // A period one picosecond longer is not the replays' period.
  CHECK_FALSE(replay::steady_state_repeats(*shape, runs->first, runs->second, runs->period + sim::Time::ps(1)));
  // The last task of the last checked micro-batch ends one picosecond later.
  const auto& tasks = runs->second.graph.tasks;
  std::size_t last = tasks.size();
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].micro_batch == shape->steady_hi - 1) last = t;
  }
  REQUIRE(last < tasks.size());
  runs->second.timeline.spans[last].end += sim::Time::ps(1);
  CHECK_FALSE(replay::steady_state_repeats(*shape, runs->first, runs->second, runs->period));
}
