// trnsim collective and trnsim topology, run as a user runs them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

struct Row {
  double size, count, time_us, algbw, busbw;
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
    if (l >> r.size >> r.count >> type >> r.time_us >> r.algbw >> r.busbw) rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("cli collective: 2-rank all-reduce on one trn1 chip follows the ring closed form") {
  const auto r = run("collective --instance trn1.32xlarge --ranks 2 all-reduce -b 1KiB -e 1GiB -f 4");
  REQUIRE(r.code == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 11);  // 1 KiB x 4^k up to 1 GiB
  // Preset figures: collective start-up 58 us, no per-step cost, the two cores share one chip-local
  // link of 113.8 GB/s (both directions together, hop latency 0). A 2-rank ring all-reduce has
  // 2(n-1) = 2 steps; in each, both cores send S/2 over that link: S per step.
  // t = 58 us + 2 * S / 113.8e9 s.
  for (const Row& row : rows) {
    const double expected_us = 58.0 + 2.0 * row.size / 113.8e9 * 1e6;
    CHECK(row.time_us == Approx(expected_us).epsilon(0.002));
    CHECK(row.count == row.size / 4);  // fp32 elements
    // algbw in GiB/s = size / time; busbw = algbw x 2(n-1)/n = algbw for n = 2.
    // (printed with 2 decimals: compare within one unit in the last place)
    CHECK(std::abs(row.algbw - row.size / (row.time_us * 1e-6) / 1073741824.0) <= 0.011);
    CHECK(row.busbw == row.algbw);
  }
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
  // quarter of the 384 GB/s per chip (trn1-arch.rst) = 96 GB/s; plus one chip-local link per chip.
  CHECK_THAT(r.out, Catch::Contains("vertices: 16"));
  CHECK_THAT(r.out, Catch::Contains("links (directed): 80"));
  CHECK_THAT(r.out, Catch::Matches("(.|\n)*neuronlink +64 +96\\.0(.|\n)*"));
  // Halving a 4x4 torus cuts 4 rings of 4 twice each: 8 links of 96 GB/s one way = 768 GB/s.
  CHECK_THAT(r.out, Catch::Contains("768.0 GB/s"));
}

TEST_CASE("cli topology: --dot writes a Graphviz digraph") {
  const auto dot = scratch("t.dot");
  const auto r = run("topology --instance trn1.32xlarge --dot '" + dot.string() + "'");
  REQUIRE(r.code == 0);
  const std::string text = slurp(dot);
  fs::remove(dot);
  CHECK(text.rfind("digraph", 0) == 0);
  // One "->" per directed link between vertices: the 64 NeuronLink links (chip-local loops are
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
