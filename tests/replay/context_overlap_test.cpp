// Ring attention's transfers hide behind the attention blocks they run beside (context_steps.hpp),
// checked on the executor with fixed communication times, independently of any network model.
#include <catch2/catch.hpp>

#include <vector>

#include "../workload/test_models.hpp"
#include "fixed_communicator.hpp"
#include "trnsim/replay/executor.hpp"
#include "trnsim/workload/build_step.hpp"

using namespace trnsim;
using namespace trnsim::workload;
using namespace trnsim::workload::testing;

namespace {

// Step time of `g` with every compute task 1 ms and every collective `collective_ms`.
sim::Time step_with(const StepGraph& g, double collective_ms) {
  sim::Engine engine;
  test::FixedCommunicator comm(engine, sim::Time::seconds(collective_ms * 1e-3), sim::Time::zero());
  const std::vector<double> seconds(g.works.size(), 1e-3);
  return replay::execute(engine, g, seconds, comm).step_time;
}

}  // namespace

TEST_CASE("context parallelism: ring transfers shorter than a block's attention are hidden") {
  // tp 1, dp 1, pp 1, cp 4: besides the CP exchanges, the only collective is the gradient
  // all-reduce over dp x cp = 4 ranks (the CP ranks hold the same parameters): one bucket, as the
  // model's bf16 gradients (about 4 MB) are below the 25 MB bucket, after the last backward task.
  // Every compute task lasts 1 ms, an attention block included. A transfer of 0.25 ms beside a
  // 1 ms block ends before the block, so the next block never waits: only what runs beside no
  // compute adds its time, the last dK/dV going home after each layer's backward and the gradient
  // all-reduce. Two layers, one micro-batch: step(0.25 ms) = step(0) + 3 x 0.25 ms, to the picosecond.
  ParallelismSpec p = parallelism(1, 1, 1, false, Recompute::None);
  p.cp = 4;
  const StepGraph g = build_step(llama(2, 256, 4, 2, 512, 1024), training(1024, 1, 1), p, plain_software());
  const sim::Time free = step_with(g, 0);
  CHECK(step_with(g, 0.25) == free + sim::Time::seconds(0.75e-3));
  // A transfer of 3 ms outlasts its 1 ms block: the transfers run back to back on the rank's TP
  // stream and the blocks wait for them. Forward: 3 transfers (9 ms), then the last block (1 ms):
  // 10 ms where the 4 blocks took 4, +6 ms. Backward: 4 transfers beside the blocks and the last
  // dK/dV home, 5 x 3 = 15 ms where the blocks took 4, +11 ms. Two layers and the gradient
  // all-reduce: 2 x 17 + 3 = +37 ms.
  CHECK(step_with(g, 3) == free + sim::Time::seconds(37e-3));
}
