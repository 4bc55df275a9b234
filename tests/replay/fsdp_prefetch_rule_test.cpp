// FSDP prefetch "as memory allows" (software fsdp_prefetch_units "memory", the preset
// torchtitan-neuron-compiled): the plan rule's choice of k against memory derived by hand, its cap
// at a pass's layers, and the step it buys.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/config/experiment.hpp"
#include "trnsim/config/step_input.hpp"
#include "trnsim/replay/plan_rule.hpp"
#include "trnsim/replay/step_simulation.hpp"
#include "trnsim/workload/memory.hpp"

using namespace trnsim;

namespace {

// One trn1.32xlarge (32 NeuronCores), TP 8 x DP 4, an 8-layer Llama-2-7B-shaped model (h 4096,
// 32 heads, 8 KV heads, SwiGLU ffn 11008, RMSNorm) under torchtitan-neuron-compiled: FSDP (zero 3
// by the preset), bf16 gathered parameters, fsdp_prefetch_units "memory".
replay::StepInput compiled_input() {
  const auto doc = nlohmann::json::parse(R"({
    "name": "prefetch",
    "cluster": {"instance": "trn1.32xlarge", "count": 1},
    "model": {"name": "m", "layers": 8, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 11008,
              "vocab": 32000, "mlp": "swiglu", "norm": "rmsnorm"},
    "training": {"seq_len": 1024, "global_batch": 8, "micro_batch": 1, "dtype": "bf16", "optimizer": "adamw"},
    "parallelism": {"tp": 8, "pp": 1, "dp": 4},
    "software": "torchtitan-neuron-compiled"
  })");
  return config::step_input(config::parse_experiment(doc, "prefetch.json", {}));
}

double peak(const replay::StepInput& in, const workload::ResolvedPlan& r, std::int64_t k) {
  workload::ParallelismSpec p = r.parallelism;
  p.fsdp_prefetch = k;
  return workload::estimate_memory(in.model, r.training, p, in.software).peak().total();
}

// Sets the chip's HBM so that one rank may use `bytes`.
void give_each_rank_hbm(replay::StepInput& in, double bytes) {
  const double scale = replay::rank_memory_capacity(in.cluster) / in.cluster.instance.chip.hbm_bytes;
  in.cluster.instance.chip.hbm_bytes = bytes / scale;
}

}  // namespace

TEST_CASE("fsdp prefetch as memory allows: the deepest k that fits, derived by hand") {
  replay::StepInput in = compiled_input();
  REQUIRE(in.software.fsdp_prefetch_units == workload::kPrefetchAsMemoryAllows);
  const workload::ResolvedPlan base = replay::resolve_plan(in);
  REQUIRE(base.parallelism.zero == 3);
  // One layer's parameters on a TP rank (TP 8: 4 query heads of 128 = 512, 1 KV head = 128 each
  // for K and V, ffn 11008 / 8 = 1376):
  //   attention 4096 x (512 + 128 + 128) + 512 x 4096 = 5,242,880
  //   norms     2 x 4096                                =     8,192
  //   MLP       3 x 4096 x 1376                         = 16,908,288
  //   total 22,159,360 parameters, gathered in bf16: G = 44,318,720 bytes.
  // Each layer of prefetch holds one more gathered layer (k + 1 of them, at most the pass's 8),
  // nothing else changes with k: memory(k) = memory(0) + k G for k <= 7.
  const double G = 44318720;
  const double m0 = peak(in, base, 0);
  CHECK(peak(in, base, 1) - m0 == Approx(G));
  CHECK(peak(in, base, 3) - m0 == Approx(3 * G));
  CHECK(peak(in, base, 8) == Approx(peak(in, base, 7)));
  // HBM for m0 + 2.5 G per rank: k = 2 fits (m0 + 2 G), k = 3 (m0 + 3 G) does not.
  give_each_rank_hbm(in, m0 + 2.5 * G);
  REQUIRE(replay::rank_memory_capacity(in.cluster) > m0 + 2 * G);
  REQUIRE(replay::rank_memory_capacity(in.cluster) < m0 + 3 * G);
  const workload::ResolvedPlan tight = replay::resolve_plan(in);
  REQUIRE(tight.parallelism.fsdp_prefetch.has_value());
  CHECK(*tight.parallelism.fsdp_prefetch == 2);
  bool noted = false;
  for (const std::string& c : tight.choices) noted |= c.rfind("/software/fsdp_prefetch_units = 2 (rule: ", 0) == 0;
  CHECK(noted);
  // Less than m0: nothing fits, k = 0 (the out-of-memory finding says the rest).
  give_each_rank_hbm(in, m0 - G);
  CHECK(replay::resolve_plan(in).parallelism.fsdp_prefetch == 0);
  // Ample memory: capped at a pass's layers, the 8 of the one chunk.
  give_each_rank_hbm(in, 1e15);
  CHECK(replay::resolve_plan(in).parallelism.fsdp_prefetch == 8);
}

TEST_CASE("fsdp prefetch as memory allows: the chosen k steps no slower than FSDP2's k = 1") {
  replay::StepInput in = compiled_input();
  const workload::ResolvedPlan base = replay::resolve_plan(in);
  give_each_rank_hbm(in, peak(in, base, 0) + 2.5 * 44318720.0);
  const workload::ResolvedPlan chosen = replay::resolve_plan(in);
  REQUIRE(chosen.parallelism.fsdp_prefetch == 2);
  workload::ResolvedPlan eager = chosen;
  eager.parallelism.fsdp_prefetch = 1;
  replay::StepRun a = replay::prepare_step(in, chosen);
  replay::replay_step(in, a);
  replay::StepRun b = replay::prepare_step(in, eager);
  replay::replay_step(in, b);
  // More prefetch only issues gathers earlier on the same stream: never later.
  CHECK(a.timeline.step_time <= b.timeline.step_time);
}
