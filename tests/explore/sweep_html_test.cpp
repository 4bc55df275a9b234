// The sweep's heat map and HTML page on a SweepResult written by hand: each cell's best plan
// aggregated by hand, the default axes, the axis names accepted, and escaping.
#include <catch2/catch.hpp>

#include <string>

#include "trnsim/error.hpp"
#include "trnsim/explore/sweep_heat_map.hpp"
#include "trnsim/explore/sweep_html.hpp"

using namespace trnsim;
using namespace trnsim::explore;
using Field = HeatAxis::Field;

namespace {

PlanOutcome point(std::size_t index, std::string vary, std::int64_t tp, std::int64_t pp, std::optional<std::int64_t> dp,
                  std::int64_t mb) {
  PlanOutcome o;
  o.index = index;
  o.vary = {std::move(vary)};
  o.tp = tp;
  o.pp = pp;
  o.dp = dp;
  o.micro_batch = mb;
  return o;
}

PlanOutcome simulated(PlanOutcome o, double step, double mfu) {
  o.status = PlanStatus::Simulated;
  o.step_time_s = step;
  o.mfu = mfu;
  o.breakdown[0] = step;
  return o;
}

PlanOutcome invalid(PlanOutcome o, std::string reason) {
  o.status = PlanStatus::Invalid;
  o.reason = std::move(reason);
  o.detail = "/parallelism: " + o.reason;
  return o;
}

// Eight points over --vary cluster.count (1, 2), tp, pp, micro-batch:
//   index vary tp pp dp mb  status          step_s  mfu
//   0     1    1  1  4  1   simulated       4.0     0.38
//   1     1    1  1  4  2   simulated       3.0     0.35
//   2     1    2  1  2  1   simulated       2.5     0.40
//   3     1    2  1  2  2   out of memory
//   4     2    1  2  2  1   simulated       5.0     0.45
//   5     2    1  2  2  2   invalid "a <b> & c"
//   6     2    2  2  -  1   invalid "x"     (dp left unset, as a derived dp of an invalid plan)
//   7     2    2  2  -  2   invalid "x"
SweepResult hand_sweep() {
  SweepResult r;
  r.summary.experiment = "hand.json";
  r.summary.title = "hand-made";
  r.summary.vary_paths = {"cluster.count"};
  r.summary.points = 8;
  r.outcomes = {simulated(point(0, "1", 1, 1, 4, 1), 4.0, 0.38), simulated(point(1, "1", 1, 1, 4, 2), 3.0, 0.35),
                simulated(point(2, "1", 2, 1, 2, 1), 2.5, 0.40),  point(3, "1", 2, 1, 2, 2),
                simulated(point(4, "2", 1, 2, 2, 1), 5.0, 0.45), invalid(point(5, "2", 1, 2, 2, 2), "a <b> & c"),
                invalid(point(6, "2", 2, 2, std::nullopt, 1), "x"), invalid(point(7, "2", 2, 2, std::nullopt, 2), "x")};
  r.outcomes[3].status = PlanStatus::OutOfMemory;
  r.outcomes[3].detail = "stage 0 needs 40 GiB of 16 GiB";
  return r;
}

constexpr std::array<HeatAxis, 2> kTpPp{HeatAxis{Field::Tp, 0}, HeatAxis{Field::Pp, 0}};

}  // namespace

TEST_CASE("sweep heat map: each cell holds the best plan of its two values, by hand", "[explore][sweep][html]") {
  const SweepResult r = hand_sweep();
  SECTION("step time: the least per cell") {
    const HeatMap m = heat_map(r, kTpPp, HeatMetric::StepTime);
    REQUIRE(m.columns == std::vector<std::string>{"1", "2"});
    REQUIRE(m.rows == std::vector<std::string>{"1", "2"});
    // tp 1, pp 1: points 0 (4.0 s) and 1 (3.0 s): point 1.
    REQUIRE(m.at(0, 0).best != nullptr);
    CHECK(m.at(0, 0).best->index == 1);
    CHECK(m.at(0, 0).simulated == 2);
    // tp 2, pp 1: point 2 (2.5 s) ran, point 3 did not fit.
    CHECK(m.at(0, 1).best->index == 2);
    CHECK(m.at(0, 1).out_of_memory == 1);
    // tp 1, pp 2: point 4 (5.0 s); point 5 invalid.
    CHECK(m.at(1, 0).best->index == 4);
    CHECK(m.at(1, 0).invalid == 1);
    // tp 2, pp 2: points 6 and 7 both invalid by rule "x": nothing ran.
    CHECK(m.at(1, 1).best == nullptr);
    CHECK(m.at(1, 1).invalid == 2);
    CHECK(m.at(1, 1).invalid_rules == std::map<std::string, std::size_t>{{"x", 2}});
    // The scale spans the cells' best values: 2.5 (tp 2, pp 1) to 5.0 (tp 1, pp 2).
    CHECK(m.low == 2.5);
    CHECK(m.high == 5.0);
    CHECK(m.unplaced == 0);
  }
  SECTION("MFU: the most per cell") {
    const HeatMap m = heat_map(r, kTpPp, HeatMetric::Mfu);
    // tp 1, pp 1: point 0 (0.38) beats point 1 (0.35), though point 1 is faster.
    CHECK(m.at(0, 0).best->index == 0);
    // The cells' best MFU: 0.38, 0.40, 0.45.
    CHECK(m.low == 0.38);
    CHECK(m.high == 0.45);
  }
  SECTION("a --vary axis and points without a value on an axis") {
    const HeatMap m = heat_map(r, {HeatAxis{Field::Vary, 0}, HeatAxis{Field::Dp, 0}}, HeatMetric::StepTime);
    CHECK(m.columns == std::vector<std::string>{"1", "2"});
    CHECK(m.rows == std::vector<std::string>{"2", "4"});  // numbers ascending, not in the order met
    CHECK(m.unplaced == 2);                                // points 6 and 7 have no dp
    // cluster.count 1, dp 2: points 2 (2.5 s) and 3 (out of memory).
    CHECK(m.at(0, 0).best->index == 2);
    // cluster.count 1, dp 4: points 0 and 1: point 1 (3.0 s).
    CHECK(m.at(1, 0).best->index == 1);
    // cluster.count 2, dp 4: no point.
    CHECK(m.at(1, 1).best == nullptr);
    CHECK(m.at(1, 1).invalid + m.at(1, 1).out_of_memory + m.at(1, 1).simulated == 0);
  }
}

TEST_CASE("sweep heat map: default axes are the first two that take more than one value", "[explore][sweep][html]") {
  SweepResult r = hand_sweep();
  // tp and pp both take 1 and 2.
  CHECK(default_heat_axes(r) == kTpPp);
  // tp 1 and pp 1 everywhere: dp (4, 2) is the first that varies, then micro_batch (1, 2).
  for (PlanOutcome& o : r.outcomes) o.tp = o.pp = 1;
  CHECK(default_heat_axes(r) == std::array<HeatAxis, 2>{HeatAxis{Field::Dp, 0}, HeatAxis{Field::MicroBatch, 0}});
  // Only the --vary value varies: it comes first, tp (the first of the order) completes the pair.
  for (PlanOutcome& o : r.outcomes) o.dp = o.micro_batch = 1;
  CHECK(default_heat_axes(r) == std::array<HeatAxis, 2>{HeatAxis{Field::Vary, 0}, HeatAxis{Field::Tp, 0}});
}

TEST_CASE("sweep heat map: --axes names", "[explore][sweep][html]") {
  const std::vector<std::string> vary{"cluster.count"};
  CHECK(parse_heat_axes("tp,pp", vary) == kTpPp);
  CHECK(parse_heat_axes("mb,v", vary) ==
        std::array<HeatAxis, 2>{HeatAxis{Field::MicroBatch, 0}, HeatAxis{Field::VirtualStages, 0}});
  CHECK(parse_heat_axes("cluster.count,sequence_parallel", vary) ==
        std::array<HeatAxis, 2>{HeatAxis{Field::Vary, 0}, HeatAxis{Field::SequenceParallel, 0}});
  CHECK_THROWS_WITH(parse_heat_axes("tp,heads", vary),
                    Catch::Contains("--axes") && Catch::Contains("no axis \"heads\"") && Catch::Contains("cluster.count"));
  CHECK_THROWS_AS(parse_heat_axes("tp", vary), InputError);
  CHECK_THROWS_AS(parse_heat_axes("tp,pp,dp", vary), InputError);
  CHECK_THROWS_WITH(parse_heat_axes("tp,tp", vary), Catch::Contains("the same axis twice"));
  CHECK_THROWS_AS(parse_heat_axes("cluster.count,tp", {}), InputError);
  CHECK_THROWS_AS(parse_heat_metric("speed"), InputError);
}

TEST_CASE("sweep html: the page holds the map, the ranking and the escaped reasons", "[explore][sweep][html]") {
  const std::string page = sweep_html(hand_sweep(), {});
  // The fastest plan overall is point 2 (2.5 s).
  CHECK_THAT(page, Catch::Contains(R"(id="best-step-time" data-seconds="2.5">2.500 s</span>)"));
  // Ranked 2.5, 3.0, 4.0, 5.0 s: points 2, 1, 0, 4.
  const auto at = [&page](const char* id) { return page.find(id); };
  CHECK(at("id=\"plan-2\"") < at("id=\"plan-1\""));
  CHECK(at("id=\"plan-1\"") < at("id=\"plan-0\""));
  CHECK(at("id=\"plan-0\"") < at("id=\"plan-4\""));
  // The best cell (2.5 s) is the ramp's best end, the worst (5.0 s) its worst end.
  CHECK_THAT(page, Catch::Contains(R"(<td class="cell" style="background:#fde725;color:#222")"));
  CHECK_THAT(page, Catch::Contains(R"(<td class="cell" style="background:#440154;color:#fff")"));
  CHECK_THAT(page, Catch::Contains(R"~(<td class="cell pruned" title="tp 2, pp 2: none ran: 2 invalid (2 x)">invalid</td>)~"));
  // The reason with markup characters arrives escaped, never raw.
  CHECK_THAT(page, Catch::Contains("a &lt;b&gt; &amp; c"));
  CHECK(page.find("a <b> & c") == std::string::npos);
  // Nothing to load.
  CHECK(page.find("http") == std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
}
