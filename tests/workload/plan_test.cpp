#include <catch2/catch.hpp>

#include <algorithm>

#include "test_models.hpp"
#include "trnsim/error.hpp"
#include "trnsim/workload/plan.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// Runs make_plan and returns the InputError message ("" if none).
std::string plan_error(const ModelSpec& m, const TrainingSpec& t, const ParallelismSpec& p, std::int64_t ranks) {
  try {
    make_plan(m, t, p, ranks);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("plan: an unresolved field is an error naming it") {
  const ModelSpec m = gpt(4, 256, 8, 1000);
  ParallelismSpec p = parallelism(1, 1, 1, false, Recompute::None);
  p.schedule.reset();
  CHECK_THAT(plan_error(m, training(128, 4, 1), p, 0), Catch::StartsWith("/parallelism/schedule: not resolved"));
  TrainingSpec t = training(128, 4, 1);
  t.micro_batch.reset();
  CHECK_THAT(plan_error(m, t, parallelism(1, 1, 1, false, Recompute::None), 0),
             Catch::StartsWith("/training/micro_batch: not resolved"));
}

TEST_CASE("plan: a TP or PP plan that does not fit is an error naming the field") {
  const ModelSpec m = llama(30, 4096, 32, 8, 11008, 32000);
  const TrainingSpec t = training(4096, 64, 1);
  // 12 does not divide 32 heads.
  CHECK(plan_error(m, t, parallelism(12, 1, 1, true, Recompute::None), 0) ==
        "/parallelism/tp: 12 does not divide heads (32)");
  // 4 divides 32 heads but 8 (kv) / 16 are fine; 64 exceeds the heads.
  CHECK_THAT(plan_error(m, t, parallelism(64, 1, 1, true, Recompute::None), 0), Catch::StartsWith("/parallelism/tp:"));
  // 32 stages for 30 layers: two would be empty (8 stages for 30 layers is an uneven split, valid).
  CHECK_THAT(plan_error(m, t, parallelism(1, 32, 1, false, Recompute::None), 0),
             Catch::StartsWith("/parallelism/pp:") && Catch::Contains("exceed layers (30)"));
  CHECK(plan_error(m, t, parallelism(1, 8, 1, false, Recompute::None), 0).empty());
  // 8 stages x 4 chunks = 32 chunks for 30 layers: 8 stages alone fit, the virtual stages do not.
  CHECK_THAT(plan_error(m, t, parallelism(1, 8, 1, false, Recompute::None, PipelineSchedule::Interleaved, 4), 0),
             Catch::StartsWith("/parallelism/virtual_stages:") && Catch::Contains("32 model chunks exceed layers (30)"));
  // 5 stages x 2 chunks = 10 divides 30, but interleaving needs micro-batches (64) % pp (5).
  CHECK_THAT(plan_error(m, t, parallelism(1, 5, 1, false, Recompute::None, PipelineSchedule::Interleaved, 2), 0),
             Catch::StartsWith("/training/global_batch:"));
  // tp x pp x dp must match the cluster.
  CHECK_THAT(plan_error(m, t, parallelism(8, 2, 4, true, Recompute::None), 128),
             Catch::StartsWith("/parallelism:") && Catch::Contains("128 ranks"));
  // dp x micro_batch must divide the global batch: 64 / (3 x 1).
  CHECK_THAT(plan_error(m, t, parallelism(1, 1, 3, false, Recompute::None), 0),
             Catch::StartsWith("/training/global_batch: 64"));
  // A consistent plan passes: 32 heads / 8, 8 kv / 8, 30 layers / 3 stages, 64 / 2.
  CHECK(plan_error(m, t, parallelism(8, 3, 2, true, Recompute::None), 48).empty());
}

TEST_CASE("plan: ranks are numbered TP fastest, then DP, then PP, unless the order says otherwise") {
  const RankLayout l(4, 3, 2, "tp,dp,pp");
  // rank = tp_i + tp * (dp_i + dp * pp_i)
  CHECK(l.rank(1, 2, 1) == 1 + 4 * (2 + 3 * 1));
  const auto c = l.coord(23);  // 23 = 3 + 4 * (2 + 3 * 1)
  CHECK(c.tp == 3);
  CHECK(c.dp == 2);
  CHECK(c.pp == 1);
  CHECK(l.tp_group(1, 0) == std::vector<std::int32_t>{4, 5, 6, 7});
  CHECK(l.dp_group(2, 1) == std::vector<std::int32_t>{14, 18, 22});
  const RankLayout o(4, 3, 2, "pp,tp,dp");  // rank = pp_i + 2 * (tp_i + 4 * dp_i)
  CHECK(o.rank(1, 2, 1) == 1 + 2 * (1 + 4 * 2));
  CHECK_THROWS_AS(RankLayout(4, 3, 2, "tp,tp,pp"), InputError);
}

TEST_CASE("plan: the rank order may name cp and ep, which default to tp, cp, ep, dp, pp") {
  // tp 2, cp 2, ep 2, outer dp 2 (the layout's DP dimension: cp x ep x dp = 8), pp 2: 32 ranks.
  // Coordinates tp_i 1, cp_i 1, ep_i 0, dp_o 1, pp_i 1: layout DP coordinate d = cp_i + cp (ep_i +
  // ep dp_o) = 1 + 2 (0 + 2) = 5.
  const RankLayout def(2, 8, 2, "tp,dp,pp", 2, 2);
  // Default order tp, cp, ep, dp, pp: strides 1, 2, 4, 8, 16; rank = 1 + 2 + 0 + 8 + 16 = 27.
  CHECK(def.rank(1, 5, 1) == 27);
  CHECK(RankLayout(2, 8, 2, "tp,cp,ep,dp,pp", 2, 2).rank(1, 5, 1) == 27);
  // "tp,dp,cp,pp": ep takes its place before dp, so tp, ep, dp, cp, pp with strides 1, 2, 4, 8,
  // 16; rank = 1 + 0 + 4 + 8 + 16 = 29, and back: cp_i = (29 / 8) mod 2 = 1, ep_i = (29 / 2) mod
  // 2 = 0, dp_o = (29 / 4) mod 2 = 1, so d = 5.
  const RankLayout late(2, 8, 2, "tp,dp,cp,pp", 2, 2);
  CHECK(late.rank(1, 5, 1) == 29);
  const auto c = late.coord(29);
  CHECK(c.tp == 1);
  CHECK(c.dp == 5);
  CHECK(c.pp == 1);
  // The CP group of the first rank: d = 0 and 1 (cp_i 0 and 1) at stride 2 by default, 8 here.
  CHECK(def.cp_group(0, 0, 0) == std::vector<std::int32_t>{0, 2});
  CHECK(late.cp_group(0, 0, 0) == std::vector<std::int32_t>{0, 8});
  // "cp,tp,pp,ep,dp": strides 1, 2, 4, 8, 16; rank = 1 + 2 + 4 + 0 + 16 = 23.
  CHECK(RankLayout(2, 8, 2, "cp,tp,pp,ep,dp", 2, 2).rank(1, 5, 1) == 23);
  CHECK(full_rank_order("tp,dp,pp") == "tp,cp,ep,dp,pp");
  CHECK(full_rank_order("tp,dp,ep,pp") == "tp,cp,dp,ep,pp");
  CHECK_THROWS_WITH(check_rank_order("tp,cp,dp,cp,pp"), Catch::StartsWith("/parallelism/rank_order") &&
                                                           Catch::Contains("\"tp,cp,dp,cp,pp\""));
  CHECK_THROWS_WITH(check_rank_order("tp,xp,dp,pp"), Catch::StartsWith("/parallelism/rank_order"));
}

TEST_CASE("plan: a TP group spanning instances is a finding, not an error") {
  const RankLayout l(32, 4, 8, "tp,dp,pp");
  // trn1.32xlarge has 32 ranks: TP 32 fits one instance exactly.
  CHECK(layout_findings(l, 32).empty());
  // With 16 ranks per instance every TP group of 32 spans two.
  const auto f = layout_findings(l, 16);
  REQUIRE(f.size() == 1);
  CHECK_THAT(f[0], Catch::StartsWith("32 of 32 TP groups"));
}

TEST_CASE("plan: EP groups spanning instances are counted group by group") {
  // tp 2, dp 4, pp 1, ep 2, order tp,dp,pp: rank = t + 2 d. EP is the fastest part of DP, so the
  // two EP groups (at tp 0) are replicas {0, 1} and {2, 3}: ranks {0, 2} and {4, 6}.
  const RankLayout l(2, 4, 1, "tp,dp,pp", 2);
  // 4 ranks per instance: instances {0, 0} and {1, 1}: none spans.
  CHECK(ep_groups_spanning_instances(l, 4) == 0);
  // 3 per instance: {0, 0} and {1, 2}: one spans.
  CHECK(ep_groups_spanning_instances(l, 3) == 1);
  // 2 per instance: {0, 1} and {2, 3}: both span.
  CHECK(ep_groups_spanning_instances(l, 2) == 2);
  // No EP, or no instance size: nothing counted.
  CHECK(ep_groups_spanning_instances(RankLayout(2, 4, 1, "tp,dp,pp"), 2) == 0);
  CHECK(ep_groups_spanning_instances(l, 0) == 0);
}

namespace {

std::vector<std::int64_t> chunk_sizes(std::int64_t layers, std::int64_t pp, std::int64_t v) {
  Plan p;
  p.pp = pp;
  p.virtual_stages = v;
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < p.chunks(); ++k) out.push_back(p.chunk_layers(layers, k));
  return out;
}

}  // namespace

TEST_CASE("plan: leftover layers go one each to the chunks before the last, counting back") {
  // Even: 8 layers / 4 chunks.
  CHECK(chunk_sizes(8, 4, 1) == std::vector<std::int64_t>{2, 2, 2, 2});
  // 10 / 4: q = 2, r = 2: chunks 2 and 1 get the extra; first and last keep 2.
  CHECK(chunk_sizes(10, 4, 1) == std::vector<std::int64_t>{2, 3, 3, 2});
  // 11 / 4: r = 3 = C - 1: every chunk but the last (LM head + loss) gets one.
  CHECK(chunk_sizes(11, 4, 1) == std::vector<std::int64_t>{3, 3, 3, 2});
  // 9 / 4: r = 1: only chunk 2, the one before the last.
  CHECK(chunk_sizes(9, 4, 1) == std::vector<std::int64_t>{2, 2, 3, 2});
  // Llama 3.1 405B, 126 layers on pp 16: 14 middle stages of 8, first and last of 7.
  const auto llama = chunk_sizes(126, 16, 1);
  CHECK(llama.front() == 7);
  CHECK(llama.back() == 7);
  CHECK(std::count(llama.begin(), llama.end(), 8) == 14);
}

TEST_CASE("plan: chunks are contiguous layer ranges in chunk order, and stages add up their chunks") {
  Plan p;
  p.pp = 16;
  // First layers: chunk 0 starts at 0, chunk 1 at 7, chunk k (1 <= k <= 15) at 7 + 8 (k - 1).
  CHECK(p.chunk_first_layer(126, 0) == 0);
  CHECK(p.chunk_first_layer(126, 1) == 7);
  CHECK(p.chunk_first_layer(126, 15) == 7 + 8 * 14);
  CHECK(p.chunk_first_layer(126, 15) + p.chunk_layers(126, 15) == 126);
  // Interleaved: 6 layers, pp 2, v 2 -> chunks {1, 2, 2, 1}; stage 0 holds chunks 0 and 2 (3
  // layers), stage 1 chunks 1 and 3 (3 layers).
  Plan q;
  q.pp = 2;
  q.virtual_stages = 2;
  CHECK(q.chunk_first_layer(6, 2) == 3);
  CHECK(q.stage_layers(6, 0) == 3);
  CHECK(q.stage_layers(6, 1) == 3);
}
