// What a faster tensor engine buys: the sanity check a single efficiency constant cannot pass.
// Doubling the chip's BF16 peak doubles the tensor engine's clock (the clock follows from the
// peak), so the cycles of the PE array halve; the vector and scalar engines, HBM, the per-kernel
// launch gaps and communication do not change. A compute-bound step therefore speeds up, but by
// less than 2x, and it can shrink by at most half of the tensor engine's busy time.
#include <catch2/catch.hpp>

#include "report_support.hpp"
#include "trnsim/cost/compute_model.hpp"

using namespace trnsim;

TEST_CASE("sanity: doubling the tensor-engine peak speeds a compute-bound step up by less than 2x") {
  const auto base = test::analyse_file("configs/examples/llama3.1-8b-trn2.json");
  const auto fast = test::analyse_file("configs/examples/llama3.1-8b-trn2.json", {"cluster.chip.peak.bf16_tflops=1334"});
  const double t1 = base.report.step_time_s;
  const double t2 = fast.report.step_time_s;
  const double tensor = base.report.engine_busy[static_cast<std::size_t>(cost::Engine::Tensor)];
  // The run is compute-bound: the tensor engine is busy for most of the step.
  REQUIRE(tensor > 0.5 * t1);
  CHECK(t2 < t1);
  CHECK(t1 / t2 < 2.0);
  // Only tensor-engine time shrinks, and by at most half.
  CHECK(t2 >= t1 - tensor / 2 - 1e-9);
  // MFU is quoted against the peak, which doubles with it.
  CHECK(fast.report.peak_flops == Approx(2 * base.report.peak_flops));
}
