// trnsim collective and trnsim topology, run as a user runs them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

struct Row {
  double size, count, time_us, algbw, busbw;
  std::string algorithm;
};

// The data rows of the Neuron benchmark table (lines that start with a number).
std::vector<Row> rows_of(const std::string& out) {
  std::vector<Row> rows;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    Row r{};
    std::string type;
    if (l >> r.size >> r.count >> type >> r.time_us >> r.algbw >> r.busbw >> r.algorithm) rows.push_back(r);
  }
  return rows;
}

// configs/hardware/dgx-a100-80gb.json as written, for the figures a test changes with --set.
nlohmann::json dgx_a100_preset() {
  return nlohmann::json::parse(slurp(std::string(TRNSIM_TEST_SOURCE_DIR) + "/configs/hardware/dgx-a100-80gb.json"));
}

}  // namespace

TEST_CASE("cli collective: 2-rank all-reduce on one trn1 chip follows the closed form") {
  const auto r = run("collective --instance trn1.32xlarge --release 2.9 --ranks 2 all-reduce -b 1KiB -e 1GiB -f 4");
  REQUIRE(r.code == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 11);  // 1 KiB x 4^k up to 1 GiB
  // Runtime release 2.9 (configs/collectives/neuron-runtime.json): launch L = 33.2 us, step S =
  // 10.7 us, message M = 3.64 us, stream efficiency 0.627; trn1's DMA path per stream
  // (configs/hardware/trn1.32xlarge.json): 32 engines / 6 collective cores x 17 GB/s = 90.667 GB/s,
  // so one stream r = 0.627 x 90.667 = 56.848 GB/s; the chip's DMA (1,000 GB/s, 500 GB/s per
  // core) is not the limit. Whatever the runtime picks (mesh, halving-doubling or a ring in
  // either direction: one stream to the one peer), 2 ranks take 2 steps of one message each, each
  // core sending size/2 to the other: a reducing step (each core also reads its size/2 operand,
  // at 500 / 2 GB/s, faster than r) and a gathering step. t = L + 2M + 2 max(S, size / 2 / r).
  const double stream = 0.627 * 32.0 / 6 * 17e9;
  for (const Row& row : rows) {
    const double data_us = row.size / 2 / stream * 1e6;
    const double expected_us = 33.2 + 2 * 3.64 + 2 * std::max(10.7, data_us);
    CHECK(row.time_us == Approx(expected_us).epsilon(0.002));
    CHECK(row.count == row.size / 4);  // fp32 elements
    // algbw in GiB/s = size / time; busbw = algbw x 2(n-1)/n = algbw for n = 2.
    // Both are printed rounded: algbw to 0.005, time to 0.05 us, which moves size/time by up to
    // algbw x 0.05 / time.
    CHECK(std::abs(row.algbw - row.size / (row.time_us * 1e-6) / 1073741824.0) <=
          0.0051 + row.algbw * 0.05 / row.time_us);
    CHECK(row.busbw == row.algbw);
  }
}

TEST_CASE("cli collective: tables A and B of the Neuron collective benchmark within 15 % at every size") {
  // shared/data/collectives.md, measured by nccom-test on trn1 (independent of trnsim). Runtime
  // release 2.9's four constants were fitted on tables A and B's first release, release 2.19's
  // launch cost on table B's later release (configs/collectives/neuron-runtime.json, "sources"):
  // an in-sample guard that a change to the collective model keeps them within 15 %.
  const double table_a[] = {58, 58, 58, 58, 60, 68, 107, 332, 1214, 4750, 18930};  // 1 KiB x 4^k
  const auto a = rows_of(run("collective --instance trn1.32xlarge --release 2.9 --ranks 2 all-reduce -b 1KiB -e 1GiB -f 4").out);
  REQUIRE(a.size() == std::size(table_a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("table A, " << a[i].size << " B");
    CHECK(std::abs(a[i].time_us / table_a[i] - 1) <= 0.15);
  }
  // Neuron's runtime of that release: mesh (trnsim's direct) up to 512 KiB, recursive
  // halving-doubling to 8 MiB, ring variants beyond (configs/collectives/neuron-runtime.json).
  CHECK(a[0].algorithm == "direct");
  CHECK(a[5].algorithm == "halving-doubling");
  CHECK(a[10].algorithm == "bidirectional-ring");
  const double table_b[] = {151, 149, 150, 179};  // 1 KiB x 8^k, 32 ranks
  const auto b = rows_of(run("collective --instance trn1.32xlarge --release 2.9 all-gather -b 1KiB -e 512KiB -f 8").out);
  REQUIRE(b.size() == std::size(table_b));
  for (std::size_t i = 0; i < b.size(); ++i) {
    INFO("table B, " << b[i].size << " B");
    CHECK(std::abs(b[i].time_us / table_b[i] - 1) <= 0.15);
    CHECK(b[i].algorithm == "direct");
  }
  // The same command with the later release: 7 to 26 times faster at these sizes.
  const double table_b_later[] = {6.16, 6.48, 8.17, 23.16};
  const auto later = rows_of(run("collective --instance trn1.32xlarge --release 2.19 all-gather -b 1KiB -e 512KiB -f 8").out);
  REQUIRE(later.size() == std::size(table_b_later));
  for (std::size_t i = 0; i < later.size(); ++i) {
    INFO("table B later release, " << later[i].size << " B");
    CHECK(std::abs(later[i].time_us / table_b_later[i] - 1) <= 0.15);
  }
}

TEST_CASE("cli collective: a 1 GiB all-reduce inside one trn2.48xlarge has 1.5x the bus bandwidth of one inside a trn1.32xlarge") {
  // Both under release 2.19 (stream efficiency 0.627), every rank of the instance, a ring in both
  // directions: each rank sends two streams, one to each ring neighbour, and a chip's torus link
  // carries one stream each way. Per stream, the lower of the DMA path and the link
  // (configs/hardware): trn1 min(0.627 x 32/6 x 17 = 56.85, 192/4 = 48) = 48 GB/s, link-bound;
  // trn2 min(0.627 x 128/16 x 23 = 115.4, 512/4 = 128) = 115.4 GB/s, stream-bound. Bus bandwidth
  // is then about two streams' worth (less the launch, 2(n-1) steps' latency and the reducing
  // steps), printed in GiB/s: trn1 <= 96e9 / 2^30 = 89.4, trn2 <= 230.8e9 / 2^30 = 215.0.
  const auto busbw = [](const std::string& instance) {
    const auto rows = rows_of(run("collective --instance " + instance + " all-reduce -b 1GiB -e 1GiB").out);
    REQUIRE(rows.size() == 1);
    return rows[0].busbw;
  };
  const double trn1 = busbw("trn1.32xlarge"), trn2 = busbw("trn2.48xlarge");
  CHECK(trn1 <= 89.41);
  CHECK(trn1 >= 0.9 * 89.4);
  CHECK(trn2 <= 215.0);
  CHECK(trn2 >= 0.9 * 215.0);
  CHECK(trn2 >= 1.5 * trn1);
}

TEST_CASE("cli collective: --software picks the collective library, --algorithm optimal the optimum") {
  // megatron-lm-2022 runs NCCL's choice: rings inside one instance, whatever the size. NCCL has no
  // runtime releases: the hardware must state the collective figures, as GPU presets do and
  // Trainium presets, whose figures are the Neuron runtime's, do not.
  const auto nccl = run("collective --instance p4d.24xlarge --software megatron-lm-2022 all-reduce -b 1KiB -e 1KiB");
  REQUIRE(nccl.code == 0);
  CHECK_THAT(nccl.out, Catch::Contains("collective library nccl"));
  REQUIRE(rows_of(nccl.out).size() == 1);
  CHECK(rows_of(nccl.out)[0].algorithm == "ring");
  // The default software of trn1.32xlarge is neuronx-distributed: Neuron's runtime, mesh at 1 KiB.
  const auto neuron = run("collective --instance trn1.32xlarge all-reduce -b 1KiB -e 1KiB");
  CHECK_THAT(neuron.out, Catch::Contains("software neuronx-distributed: collective library neuron-runtime"));
  CHECK(rows_of(neuron.out)[0].algorithm == "direct");
  // The optimum is never slower than the library's choice.
  const auto optimal = run("collective --instance trn1.32xlarge --algorithm optimal all-reduce -b 1KiB -e 1KiB");
  REQUIRE(optimal.code == 0);
  CHECK(rows_of(optimal.out)[0].time_us <= rows_of(neuron.out)[0].time_us);
  const auto nccl_on_trn1 = run("collective --instance trn1.32xlarge --software megatron-lm-2022 all-reduce");
  CHECK(nccl_on_trn1.code == 2);
  CHECK_THAT(nccl_on_trn1.err, Catch::Contains("/cluster/calibration/collective_launch_us: missing"));
  const auto bad = run("collective --instance trn1.32xlarge --software no-such-stack all-reduce");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("no-such-stack"));
}

TEST_CASE("cli collective: busbw is algbw times the nccl-tests factor for every operation") {
  // 32 ranks of one trn1.32xlarge: all-reduce 2(n-1)/n = 62/32; all-gather, reduce-scatter 31/32.
  const std::vector<std::pair<std::string, double>> ops{
      {"all-reduce", 62.0 / 32}, {"all-gather", 31.0 / 32}, {"reduce-scatter", 31.0 / 32}};
  for (const auto& [op, factor] : ops) {
    const auto r = run("collective --instance trn1.32xlarge " + op + " -b 1MiB -e 64MiB -f 8");
    REQUIRE(r.code == 0);
    const auto rows = rows_of(r.out);
    REQUIRE(rows.size() == 3);
    for (const Row& row : rows) {
      // Rounded to 2 decimals in the table: compare with a tolerance of one unit in the last place.
      CHECK(std::abs(row.busbw - row.algbw * factor) <= 0.011);
    }
  }
}

TEST_CASE("cli collective: a bad operation or preset is a usage error with exit 2") {
  CHECK(run("collective --instance trn1.32xlarge all-sum").code == 2);
  const auto r = run("collective --instance trn9.huge all-reduce");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("trn9.huge"));
}

TEST_CASE("cli topology: a trn1.32xlarge is a 4x4 torus with the published per-chip bandwidth") {
  const auto r = run("topology --instance trn1.32xlarge");
  REQUIRE(r.code == 0);
  // 16 chips; a 4x4 torus gives each chip 4 neighbours: 64 directed NeuronLink links, each a
  // quarter of the 192 GB/s per chip each way (trn1-arch.rst's 384 counts both) = 48 GB/s; plus
  // one DMA link per rank (32).
  CHECK_THAT(r.out, Catch::Contains("vertices: 16"));
  CHECK_THAT(r.out, Catch::Contains("links (directed): 96"));
  CHECK_THAT(r.out, Catch::Matches("(.|\n)*neuronlink +64 +48\\.0(.|\n)*"));
  // Halving a 4x4 torus cuts 4 rings of 4 twice each: 8 links of 48 GB/s one way = 384 GB/s.
  CHECK_THAT(r.out, Catch::Contains("384.0 GB/s"));
}

TEST_CASE("cli topology: --dot writes a Graphviz digraph") {
  const auto dot = scratch("t.dot");
  const auto r = run("topology --instance trn1.32xlarge --dot '" + dot.string() + "'");
  REQUIRE(r.code == 0);
  const std::string text = slurp(dot);
  fs::remove(dot);
  CHECK(text.rfind("digraph", 0) == 0);
  // One "->" per directed link between vertices: the 64 NeuronLink links (DMA loops are
  // left out of the picture).
  std::size_t arrows = 0;
  for (std::size_t at = text.find("->"); at != std::string::npos; at = text.find("->", at + 2)) ++arrows;
  CHECK(arrows == 64);
}

TEST_CASE("cli collective: sizes are whole bytes with binary multiples, as nccl-tests reads them") {
  // K, KB and KiB all mean 1024 (G: 2^30), in any case: -b 1KB -e 2kib -f 2 gives 1024 and 2048.
  const auto r = run("collective --instance trn1.32xlarge --ranks 2 all-reduce -b 1KB -e 2kib -f 2");
  REQUIRE(r.code == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].size == 1024);
  CHECK(rows[1].size == 2048);
  const auto g = run("collective --instance trn1.32xlarge --ranks 2 all-reduce -b 1GiB -e 1G");
  REQUIRE(g.code == 0);
  REQUIRE(rows_of(g.out).size() == 1);
  CHECK(rows_of(g.out)[0].size == 1073741824.0);
  // Not a whole number of bytes, not positive, beyond 1 PiB, or below -b: usage errors.
  for (const char* bad : {"-b 1.5KiB", "-b 0", "-b -1", "-e 2PiB", "-b 1MiB -e 1KiB", "-b 1XB"}) {
    INFO(bad);
    CHECK(run(std::string("collective --instance trn1.32xlarge all-reduce ") + bad).code == 2);
  }
}

TEST_CASE("cli collective: --set doubling NVLink halves the data part of a ring all-reduce") {
  // One dgx-a100-80gb, 8 GPUs on an NVSwitch, ring forced. closed_form.hpp: a schedule costs L plus
  // its steps, a step M x 1 + max(S, b / rate) + latency (M and S constants, 0 on this preset; at
  // 512 MiB b / rate is far above S). A ring all-reduce of `size` bytes over n ranks is 2(n-1)
  // steps in which each rank sends size/n to its neighbour through its own NVLink (load 1, no DMA
  // link on GPUs), so
  //   t(size) = fixed + size x 2(n-1) / (n B),  B the NVLink bandwidth,
  // affine in size. Read the fixed part and the slope from the baseline's two rows; with B doubled
  // the fixed part stays and the slope halves.
  const std::string sizes = "collective --instance dgx-a100-80gb --algorithm ring all-reduce -b 512MiB -e 1GiB -f 2";
  const auto base = run(sizes);
  REQUIRE(base.code == 0);
  const auto b = rows_of(base.out);
  REQUIRE(b.size() == 2);
  const double slope_us_per_byte = (b[1].time_us - b[0].time_us) / (b[1].size - b[0].size);
  const double fixed_us = b[1].time_us - b[1].size * slope_us_per_byte;
  // The premise (the NVLink is the one bottleneck): the slope is 2(n-1)/(n B) with the preset's B.
  const auto preset = dgx_a100_preset();
  const double nvlink = preset["intra"]["bandwidth_GBps"].get<double>() * 1e9;
  CHECK(slope_us_per_byte == Approx(2.0 * 7 / (8 * nvlink) * 1e6).epsilon(1e-3));

  const std::string doubled = "--set cluster.intra.bandwidth_GBps=" + std::to_string(2 * nvlink / 1e9);
  const auto fast = run(sizes + " " + doubled);
  REQUIRE(fast.code == 0);
  CHECK_THAT(fast.out, Catch::Contains("# with " + doubled + "\n"));
  const auto f = rows_of(fast.out);
  REQUIRE(f.size() == 2);
  for (std::size_t i = 0; i < f.size(); ++i) {
    // Times are printed to 0.1 us: the fitted line carries up to about 0.2 us of rounding.
    CHECK(std::abs(f[i].time_us - (fixed_us + f[i].size * slope_us_per_byte / 2)) <= 0.3);
    CHECK(f[i].algorithm == "ring");
  }
}

TEST_CASE("cli collective: --set reaches the calibration and the cluster size") {
  const std::string ring = "collective --instance dgx-a100-80gb --algorithm ring all-reduce -b 1KiB -e 1MiB -f 32";
  const auto base = run(ring);
  REQUIRE(base.code == 0);
  // The launch cost L is paid once per collective (closed_form.hpp): 10 us more, 10 us longer at
  // every size, whatever the schedule.
  const auto preset = dgx_a100_preset();
  const double launch_us = preset["calibration"]["collective_launch_us"].get<double>();
  const auto later = run(ring + " --set cluster.calibration.collective_launch_us=" + std::to_string(launch_us + 10));
  REQUIRE(later.code == 0);
  const auto b = rows_of(base.out), l = rows_of(later.out);
  REQUIRE(b.size() == 3);
  REQUIRE(l.size() == b.size());
  for (std::size_t i = 0; i < b.size(); ++i) CHECK(std::abs(l[i].time_us - b[i].time_us - 10) <= 0.11);
  // cluster.count: two instances of 8 GPUs, every GPU a rank by default.
  const auto two = run("collective --instance dgx-a100-80gb all-reduce -b 1KiB -e 1KiB --set cluster.count=2");
  REQUIRE(two.code == 0);
  CHECK_THAT(two.out, Catch::Contains("all-reduce on 2 x dgx-a100-80gb, 16 ranks"));
}

TEST_CASE("cli collective: --set outside the cluster block, or to a key it lacks, is refused") {
  const auto outside = run("collective --instance trn2.48xlarge all-reduce --set model.layers=2");
  CHECK(outside.code == 2);
  CHECK_THAT(outside.err, Catch::Contains("collective --instance trn2.48xlarge: --set model.layers=2: expected a path in "
                                          "the cluster block"));
  CHECK_THAT(outside.err, Catch::Contains("found /model/layers"));
  const auto unknown = run("collective --instance trn2.48xlarge all-reduce --set cluster.chip.hbm_bandwith_GBps=1");
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("--set cluster.chip.hbm_bandwith_GBps=1: /cluster/chip/hbm_bandwith_GBps "
                                          "does not exist"));
  const auto range = run("collective --instance trn2.48xlarge all-reduce --set cluster.chip.hbm_bandwidth_GBps=0");
  CHECK(range.code == 2);
  CHECK_THAT(range.err, Catch::Contains("(with --set cluster.chip.hbm_bandwidth_GBps=0): /cluster/chip/hbm_bandwidth_GBps: "
                                        "expected a number in"));
}

TEST_CASE("cli collective: on Trainium --set states a figure over the runtime release's, and the DMA engines set the stream") {
  // 2 ranks on one trn1 chip, 1 GiB, release 2.19 (launch 0.3 us, no step or message cost): two
  // steps of one stream each moving 512 MiB at r = 0.627 x 32/6 x 17 GB/s = 56.848 GB/s (the
  // chip's DMA, 500 GB/s per core, and the reduction's read at 250 GB/s are faster):
  // t = 0.3 us + 2 x 536,870,912 B / r = 18,888.2 us. Doubling what one DMA engine streams
  // (17 -> 34 GB/s) doubles r: t = 0.3 + 9,443.9 us.
  const std::string ar = "collective --instance trn1.32xlarge --ranks 2 all-reduce -b 1GiB -e 1GiB";
  const auto base = rows_of(run(ar).out);
  const auto fast = rows_of(run(ar + " --set cluster.chip.dma_engine_GBps=34").out);
  REQUIRE(base.size() == 1);
  REQUIRE(fast.size() == 1);
  const double r = 0.627 * 32.0 / 6 * 17e9;
  CHECK(base[0].time_us == Approx(0.3 + 2 * 536870912.0 / r * 1e6).margin(0.06));
  CHECK(fast[0].time_us == Approx(0.3 + 536870912.0 / r * 1e6).margin(0.06));
  // A stated launch cost replaces the release's 0.3 us: a 1 KiB call (data 512 B / r ~ 0.01 us
  // per step) takes 10.3 us plus its two steps' data.
  const auto launch = rows_of(run("collective --instance trn1.32xlarge --ranks 2 all-reduce -b 1KiB -e 1KiB "
                                  "--set cluster.calibration.collective_launch_us=10.3").out);
  REQUIRE(launch.size() == 1);
  CHECK(launch[0].time_us == Approx(10.3 + 2 * 512 / r * 1e6).margin(0.06));
}

TEST_CASE("cli collective: across instances the Neuron runtime runs hierarchical with mesh stages up to 512 KiB") {
  // configs/collectives/neuron-runtime.json: across instances, mesh stages ("Mesh+Mesh") up to
  // 512 KiB, ring stages beyond. Two trn1.32xlarge, 64 ranks, release 2.19 (launch 0.3 us, no step
  // or message cost): 4 steps instead of 31 + 2 + 31, so at 1 KiB the mesh form pays 4 steps' route
  // latencies (at most 4 torus hops of 1.5 us inside, 15 us of EFA across) where the ring form pays
  // 64: at most 0.3 + 2 x 6 + 2 x 15 = 42.3 us plus data, against 60 steps of at least 1.5 us.
  const auto rows = rows_of(run("collective --instance trn1.32xlarge --nodes 2 all-reduce -b 512KiB -e 1MiB -f 2").out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].algorithm == "hierarchical-mesh");
  CHECK(rows[1].algorithm == "hierarchical");
  const auto mesh = rows_of(run("collective --instance trn1.32xlarge --nodes 2 all-reduce -b 1KiB -e 1KiB").out);
  const auto ring = rows_of(run("collective --instance trn1.32xlarge --nodes 2 --algorithm hierarchical all-reduce -b 1KiB -e 1KiB").out);
  REQUIRE(mesh.size() == 1);
  REQUIRE(ring.size() == 1);
  CHECK(mesh[0].time_us < 42.3 + 1);
  CHECK(ring[0].time_us > 60 * 1.5);
}
