// The flow model's fast path and its conversion into flows (contract in src/net/flow_model.hpp).
#include <catch2/catch.hpp>

#include "test_clusters.hpp"
#include "test_runs.hpp"
#include "trnsim/net/network.hpp"

using namespace trnsim;
using net::Algorithm;
using net::CollectiveOp;
using net::NetworkModelKind;
using test::crossing_cluster;

namespace {
constexpr double kUplink = 6.25e9;

sim::Time transfer_alone(int src, int dst, double bytes) {
  sim::Engine engine;
  net::Network net(crossing_cluster(), NetworkModelKind::Flow, engine);
  sim::Time done;
  net.start_transfer(src, dst, bytes, [&] { done = engine.now(); });
  engine.run();
  return done;
}
}  // namespace

TEST_CASE("flow fast path: calls on disjoint links stay on the fast path and take their time alone") {
  // {0, 1} stays inside node 0 (its NVSwitch), {8, 9} inside node 1: no link in common.
  const net::Collective a{CollectiveOp::AllReduce, {0, 1}, 64e6, Algorithm::Ring};
  const net::Collective b{CollectiveOp::AllReduce, {8, 9}, 64e6, Algorithm::Ring};
  test::TwoCalls both(crossing_cluster(), NetworkModelKind::Flow, a, b);
  net::Network& net = both.net;
  // Alone, by the analytic model: the two rings are alike, each 2 steps of S/2 at 100 GB/s plus fixed terms.
  CHECK(both.done_a == net.estimate(a));
  CHECK(both.done_b == net.estimate(b));
  CHECK(net.counters().fast == 2);
  CHECK(net.counters().converted == 0);
  CHECK(net.counters().flows == 0);
  // Each ring: n x 2(n-1) x S/n = 2S with n = 2; two rings: 4S.
  CHECK(net.counters().bytes_delivered == Approx(4 * 64e6).epsilon(1e-12));
}

TEST_CASE("flow fast path: a transfer arriving mid-way on a held link slows both as max-min predicts") {
  const double s = 100e6;  // 16 ms alone on the 6.25 GB/s uplink
  const sim::Time alone_a = transfer_alone(0, 9, s);
  const sim::Time alone_b = transfer_alone(8, 1, s);
  // D: start-up, step and route latency (the same for both mirror routes).
  const double d = alone_a.to_seconds() - s / kUplink;
  REQUIRE(alone_b == alone_a);
  sim::Engine engine;
  net::Network net(crossing_cluster(), NetworkModelKind::Flow, engine);
  sim::Time done_a, done_b;
  net.start_transfer(0, 9, s, [&] { done_a = engine.now(); });
  const sim::Time tb = sim::Time::ps(alone_a.picoseconds() / 2);
  engine.schedule(tb, [&] { net.start_transfer(8, 1, s, [&] { done_b = engine.now(); }); });
  engine.run();
  // At tb, A is half done (r = 1/2): S/2 left, starting after D/2. B starts after D.
  // tb + D/2 .. tb + D: A alone at 6.25 GB/s, sends 6.25e9 D/2.
  // Then both at 3.125 GB/s until A's S/2 - 6.25e9 D/2 are through: (S/2)/3.125e9 - D = 16 ms - D,
  // so A ends at tb + 16 ms (alone it would have ended at tb + 8 ms + D/2).
  // B has then sent 3.125e9 (16 ms - D); its 50 MB + 3.125e9 D left go at full rate: 8 ms + D/2,
  // so B ends at tb + 24 ms + D/2 (alone: tb + 16 ms + D).
  const double t = tb.to_seconds();
  CHECK(done_a.to_seconds() == Approx(t + 16e-3).epsilon(1e-9));
  CHECK(done_b.to_seconds() == Approx(t + 24e-3 + d / 2).epsilon(1e-9));
  CHECK(net.counters().converted == 1);
  CHECK(net.counters().coarse == 1);
  // Bytes: both transfers in full, and each crosses one uplink: 2S on uplinks, busy 2S / 6.25 GB/s.
  CHECK(net.counters().bytes_delivered == Approx(2 * s).epsilon(1e-12));
  double up_bytes = 0, up_busy = 0;
  for (const auto& u : net.link_usage()) {
    if (u.kind != net::LinkKind::ClosUplink) continue;
    up_bytes += u.bytes;
    up_busy += u.busy_s;
  }
  CHECK(up_bytes == Approx(2 * s).epsilon(1e-12));
  CHECK(up_busy == Approx(2 * s / kUplink).epsilon(1e-9));
  CHECK(net.counters().in_flight == 0);
}

TEST_CASE("flow fast path: a call converted at its start behaves as one started on busy links") {
  // Both rings start at once: the second converts the first with nothing elapsed (r = 1), so both
  // wait their fixed terms and share the uplinks evenly, ending together.
  const net::Collective a{CollectiveOp::AllReduce, {0, 9}, 100e6, Algorithm::Ring};
  const net::Collective b{CollectiveOp::AllReduce, {1, 8}, 100e6, Algorithm::Ring};
  const test::TwoCalls both(crossing_cluster(), NetworkModelKind::Flow, a, b);
  const net::Network& net = both.net;
  CHECK(both.done_a == both.done_b);
  CHECK(net.counters().converted == 1);
  CHECK(net.counters().coarse == 1);
  CHECK(net.counters().fast == 0);
  // Each ring pair sends S in each direction (2 steps of S/2): 4 flows of S in all.
  CHECK(net.counters().bytes_delivered == Approx(4 * 100e6).epsilon(1e-12));
}
