#include <catch2/catch.hpp>

#include <string>

#include <fmt/core.h>

#include "report_support.hpp"
#include "trnsim/report/analysis/findings.hpp"

using namespace trnsim;

namespace {

double part(const report::StepReport& r, report::Part p) { return r.breakdown.seconds[static_cast<std::size_t>(p)]; }

std::string rules(const report::StepReport& r) {
  std::string s;
  for (const auto& f : r.findings) s += f.rule + fmt::format(" {:.3g}s; ", f.seconds);
  return s;
}

}  // namespace

TEST_CASE("findings: a slow data-parallel gradient sync is the first finding") {
  // 2 trn1.32xlarge, DP 64 of a 2-layer hidden-1024 decoder: 2 x 12.6M + 2.1M (embedding and
  // head at vocabulary 1024) = 27M parameters, G = 55 MB of bf16 gradients on every rank. With
  // the EFA cut from 800 to 1 Gbit/s per instance (0.125 GB/s), an all-reduce between the two
  // instances must send at least G/2 out of each instance for the reduction and G/2 for the
  // result: G / 0.125 GB/s = 0.44 s at the very least. Compute is milliseconds: 2 micro-batches
  // of 1024 tokens at 6 x 27M FLOP per token = 0.33 TFLOP per rank on a ~90 TFLOP/s core. So the
  // sync, exposed after the last backward, is most of the step and the first finding.
  const auto a = test::analyse_json(test::small_decoder(2, 2, 1, 1, 64, 128), {"cluster.efa.bandwidth_Gbps=1"});
  const auto& r = a.report;
  INFO(rules(r));
  REQUIRE_FALSE(r.findings.empty());
  CHECK(r.findings.front().rule == "exposed_dp_comm");
  CHECK(r.findings.front().seconds == Approx(part(r, report::Part::ExposedDp)));
  CHECK(r.findings.front().seconds > 0.5 * r.step_time_s);
  CHECK_THAT(r.findings.front().suggestion, Catch::Contains("gradient_bucket_MB"));
  // At least 0.44 s of sync, of which at most the milliseconds of backward compute overlap.
  CHECK(r.findings.front().seconds > 0.4);
  // The same run with the published EFA: its bandwidth term is 800x shorter; latency and start-up
  // terms stay (a few ms at most), far below the 0.44 s bound above.
  const auto fast = test::analyse_json(test::small_decoder(2, 2, 1, 1, 64, 128));
  CHECK(part(fast.report, report::Part::ExposedDp) < part(r, report::Part::ExposedDp) / 10);
  // The cut EFA is the busiest link kind.
  REQUIRE_FALSE(r.links.top.empty());
  CHECK(r.links.top.front().kind == net::LinkKind::EfaPort);
}

TEST_CASE("findings: PP 8 with 8 micro-batches is bubble-bound first") {
  // One trn1.32xlarge: TP 4 x PP 8, one layer per stage, a 1024-entry vocabulary. 1F1B with
  // p = 8 stages and m = 8 micro-batches idles each stage for (p-1)/(m+p-1) = 7/15 = 46.7 % of
  // the step when the stages are equal. Here the bottleneck (most compute) is the last stage, which
  // also runs the final norm, LM head and loss (about 20 % more per micro-batch): with the others
  // taking t and it 1.2 t per micro-batch, it idles (p-1) t out of (m-1) 1.2 t + (p-1) t + 1.2 t,
  // 7 / 16.6 = 42 %. So the bubble is between 40 % and the closed form's 46.7 %, and nothing else
  // (exposed TP collectives, the imbalance itself) comes near.
  const auto a = test::analyse_json(test::small_decoder(1, 8, 4, 8, 1, 8));
  const auto& r = a.report;
  INFO(rules(r));
  REQUIRE(r.plan.micro_batches == 8);
  REQUIRE_FALSE(r.findings.empty());
  CHECK(r.findings.front().rule == "pipeline_bubble");
  CHECK(r.findings.front().seconds / r.step_time_s > 0.40);
  CHECK(r.findings.front().seconds / r.step_time_s < 7.0 / 15);
  CHECK_THAT(r.findings.front().message, Catch::Contains("46.7 %"));  // the closed form quoted
}

TEST_CASE("findings: out of memory names the dominant term and comes first") {
  SECTION("model state: optimizer states") {
    // Llama 2 7B on the 2 cores of one trn1.2xlarge, DP 2 without ZeRO: 6.7B parameters x
    // (2 weights + 2 gradients + 12 fp32 master and Adam states) bytes per rank, about 100 GiB
    // against 16 GiB per core; the optimizer states are 12/16 of it, and 128-token sequences keep
    // activations small.
    nlohmann::json doc = test::small_decoder(1, 2, 1, 1, 2, 2);
    doc["cluster"]["instance"] = "trn1.2xlarge";
    doc["model"] = "llama2-7b";
    doc["training"]["seq_len"] = 128;
    const auto a = test::analyse_json(doc);
    const auto& r = a.report;
    INFO(rules(r));
    REQUIRE_FALSE(r.findings.empty());
    CHECK(r.findings.front().rule == "out_of_memory");
    CHECK_THAT(r.findings.front().message, Catch::Contains("optimizer states dominate"));
    CHECK_THAT(r.findings.front().suggestion, Catch::Contains("parallelism.zero=1"));
  }
  SECTION("activations: attention probabilities without recompute") {
    // The tiny example at 32768-token sequences, materialized attention, no recompute: each layer keeps the attention
    // probabilities, b a_r s^2 (2 + 1 + 2) bytes = 2 heads x 32768^2 x 5 = 10 GiB per layer and
    // rank, 20 GiB for 2 layers, over the 16 GiB of a core; its 3M parameters weigh nothing.
    const auto a = test::analyse_file(
        "configs/examples/tiny-trn1.json", {"training.seq_len=32768", "training.attention=materialized"});
    const auto& r = a.report;
    INFO(rules(r));
    REQUIRE_FALSE(r.findings.empty());
    CHECK(r.findings.front().rule == "out_of_memory");
    CHECK_THAT(r.findings.front().message, Catch::Contains("activations dominate"));
    CHECK_THAT(r.findings.front().suggestion, Catch::Contains("parallelism.recompute=selective"));
  }
}

TEST_CASE("findings: ring transfers that outlast their attention blocks are cp_exposed, not exposed_tp_comm") {
  // 1 trn1.32xlarge, tp 1, cp 16, dp 2 = 32 ranks. Each rank holds 1024 / 16 = 64 tokens: a
  // block's attention is 16 heads x 64^2 / 2 scores, microseconds (the run's 1.2 ms of attention
  // are 2 layers x 16 blocks forward and backward: under 20 us a block). With a collective launch
  // cost of 1 ms (calibration collective_launch_us) every ring transfer outlasts its block by
  // more than 0.9 ms: the forward alone exposes 2 layers x 15 transfers x 0.9 ms = 27 ms, while
  // the gradient all-reduce is one call. tp = 1: the CP exchanges are the only work on the TP
  // stream, so the whole exposed TP part is theirs, and the finding claims it.
  auto doc = test::small_decoder(1, 2, 1, 1, 2, 2);
  doc["parallelism"]["cp"] = 16;
  const auto a = test::analyse_json(doc, {"cluster.calibration.collective_launch_us=1000"});
  const auto& r = a.report;
  INFO(rules(r));
  REQUIRE_FALSE(r.findings.empty());
  CHECK(r.findings.front().rule == "cp_exposed");
  CHECK(r.findings.front().seconds == Approx(part(r, report::Part::ExposedTp)).epsilon(1e-9));
  CHECK(r.cp_exposed_s > 2 * 15 * 0.9e-3);
  for (const auto& f : r.findings) CHECK(f.rule != "exposed_tp_comm");
  CHECK_THAT(r.findings.front().suggestion, Catch::Contains("parallelism.cp"));
}

TEST_CASE("findings: ranked by seconds, each with evidence and a suggestion") {
  const auto a = test::analyse_json(test::small_decoder(1, 8, 4, 8, 1, 8));
  const auto& f = a.report.findings;
  REQUIRE(f.size() >= 2);
  for (std::size_t i = 0; i < f.size(); ++i) {
    INFO(f[i].rule);
    CHECK_FALSE(f[i].message.empty());
    CHECK_FALSE(f[i].suggestion.empty());
    if (i > 0 && f[i].rule != "out_of_memory") CHECK(f[i - 1].seconds >= f[i].seconds);
    if (f[i].seconds > 0) CHECK(f[i].seconds >= report::kMinStepShare * a.report.step_time_s);
  }
}

TEST_CASE("findings: the HBM finding recommends HBM and DMA together where DMA is no faster") {
  // trn1.32xlarge: DMA 1,000 GB/s above HBM's 880, so more HBM alone is worth having. With the DMA
  // figure set to HBM's, the DMA engines move what kernels read at min(HBM, DMA) = HBM: raising
  // HBM alone would buy nothing, and the suggestion names both figures.
  const auto fast_dma = test::analyse_json(test::small_decoder(1, 1, 1, 1, 32, 32));
  const auto capped = test::analyse_json(test::small_decoder(1, 1, 1, 1, 32, 32), {"cluster.chip.dma_bandwidth_GBps=880.468"});
  const auto suggestion = [](const report::StepReport& r) {
    for (const auto& f : r.findings)
      if (f.rule == "hbm_bound_ops") return f.suggestion;
    FAIL("no hbm_bound_ops finding");
    return std::string();
  };
  CHECK_FALSE(fast_dma.report.hbm_capped_by_dma);
  CHECK(capped.report.hbm_capped_by_dma);
  CHECK_THAT(suggestion(fast_dma.report), !Catch::Contains("dma_bandwidth_GBps"));
  CHECK_THAT(suggestion(capped.report), Catch::Contains("HBM and DMA bandwidth together"));
  CHECK_THAT(suggestion(capped.report), Catch::Contains("dma_bandwidth_GBps"));
}

TEST_CASE("findings: a dtype the software has no precision recipe for is a finding of 0 s, listed last") {
  // An otherwise empty report: no rule that costs time applies, so only the precision rule can.
  report::StepReport r;
  r.precision = {.software = "stack", .dtype = workload::Precision::Fp8,
                 .stated = {workload::Precision::Bf16, workload::Precision::Fp16}};
  auto f = report::find_bottlenecks(r, {});
  REQUIRE(f.size() == 1);
  CHECK(f.back().rule == "generic_precision_recipe");
  CHECK(f.back().seconds == 0);
  // fp8's generic recipe (README, training.dtype): bf16 weights and gradients, fp32 accumulation,
  // master copy and moments.
  CHECK(f.back().message == "software stack has no precision recipe for training dtype fp8: the generic fp8 recipe "
                            "ran (weights bf16, gradients bf16, accumulation fp32, master weights fp32, optimizer "
                            "states fp32)");
  CHECK_THAT(f.back().suggestion, Catch::Contains("(bf16, fp16)"));
  // A recipe of its own for the dtype: no finding.
  r.precision.stated.push_back(workload::Precision::Fp8);
  CHECK(report::find_bottlenecks(r, {}).empty());
}
