// The trnsim executable, run as a user runs it: exit codes, stdout and stderr.
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "run_cli.hpp"
#include "trnsim/report/writers/json_report.hpp"
#include <nlohmann/json.hpp>

using namespace trnsim::test;

TEST_CASE("cli: --help lists the presets and run subcommands") {
  const auto r = run("--help");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("presets"));
  CHECK_THAT(r.out, Catch::Contains("run"));
}

TEST_CASE("cli: --version prints the version") {
  const auto r = run("--version");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("0."));
}

TEST_CASE("cli: presets prints every preset file's name") {
  const auto r = run("presets");
  REQUIRE(r.code == 0);
  int seen = 0;
  for (const char* dir : {"hardware", "models"})
    for (const auto& e : fs::directory_iterator(std::string(TRNSIM_TEST_SOURCE_DIR) + "/configs/" + dir)) {
      const std::string name = e.path().stem().string();
      INFO(name);
      CHECK_THAT(r.out, Catch::Contains(name));
      ++seen;
    }
  CHECK(seen >= 21);  // 10 instances + 11 models
}

TEST_CASE("cli: presets prints trn1.32xlarge's instance totals") {
  const auto r = run("presets");
  // trn1-arch.rst: 16 chips, 32 cores, 3,040 TFLOPS BF16, 512 GiB HBM, 384 GB/s NeuronLink per chip
  // (both directions: 192 each way, the column's unit), 800 Gbps EFA.
  const auto line_start = r.out.find("trn1.32xlarge");
  REQUIRE(line_start != std::string::npos);
  const std::string line = r.out.substr(line_start, r.out.find('\n', line_start) - line_start);
  std::istringstream cols(line);
  std::string name, chips, ranks, tflops, hbm, intra, efa, software;
  cols >> name >> chips >> ranks >> tflops >> hbm >> intra >> efa >> software;
  CHECK(chips == "16");
  CHECK(ranks == "32");
  CHECK(tflops == "3040");
  CHECK(hbm == "512");
  CHECK(intra == "192");
  CHECK(efa == "800");
  // Its hardware file's "software" (configs/hardware/trn1.32xlarge.json).
  CHECK(software == "neuronx-distributed");
}

TEST_CASE("cli: presets shows each software preset's backward TP overlap as its file states it") {
  const auto r = run("presets");
  REQUIRE(r.code == 0);
  int seen = 0;
  for (const auto& e : fs::directory_iterator(std::string(TRNSIM_TEST_SOURCE_DIR) + "/configs/software")) {
    const std::string name = e.path().stem().string();
    INFO(name);
    std::ifstream in(e.path());
    const bool overlapped = nlohmann::json::parse(in).value("/overlap/tp_comm"_json_pointer, false);
    const auto at = r.out.find("\n  " + name + " ");
    REQUIRE(at != std::string::npos);
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    // Columns: name micro sp zero recompute attention "dp reduction" "tp overlap" collectives.
    std::istringstream cols(line);
    std::vector<std::string> words{std::istream_iterator<std::string>(cols), std::istream_iterator<std::string>()};
    REQUIRE(words.size() == 9);
    CHECK(words[7] == (overlapped ? "backward" : "none"));
    ++seen;
  }
  CHECK(seen >= 8);
}

TEST_CASE("cli: run --dry-run prints the resolved experiment with the overridden value") {
  const auto r = run("run '" + example("tiny-trn1.json") +
                     "' --dry-run --set parallelism.tp=1 --set parallelism.dp=2 --set cluster.chip.hbm_GiB=64");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["parallelism"]["tp"] == 1);
  CHECK(j["parallelism"]["dp"] == 2);
  CHECK(j["cluster"]["chip"]["hbm_GiB"] == 64);
  CHECK(j["cluster"]["instance"] == "trn1.2xlarge");
  CHECK(j["model"]["name"] == "tiny-decoder");
}

TEST_CASE("cli: run writes a JSON report whose breakdown adds up to the step time, the same on every run") {
  const fs::path a = scratch("a.json"), b = scratch("b.json");
  const auto r1 = run("run '" + example("tiny-trn1.json") + "' --json '" + a.string() + "'");
  const auto r2 = run("run '" + example("tiny-trn1.json") + "' --json '" + b.string() + "'");
  REQUIRE(r1.code == 0);
  REQUIRE(r2.code == 0);
  CHECK_THAT(r1.out, Catch::Contains("step time"));
  const std::string ja = slurp(a), jb = slurp(b);
  fs::remove(a);
  fs::remove(b);
  CHECK(ja == jb);  // determinism: byte-identical reports
  const auto j = nlohmann::json::parse(ja);
  CHECK(j["schema_version"] == trnsim::report::kReportSchemaVersion);
  CHECK(j["experiment"]["model"]["name"] == "tiny-decoder");
  double sum = 0;
  for (const auto& [part, seconds] : j["breakdown"]["seconds"].items()) sum += seconds.get<double>();
  const double step = j["results"]["step_time_s"].get<double>();
  REQUIRE(step > 0);
  CHECK(sum == Approx(step).epsilon(1e-9));
}

TEST_CASE("cli: run --strict exits 1 when a rank runs out of memory") {
  // tiny-trn1 needs about 0.02 GiB per rank (mostly fp32 optimizer states); 1 MiB of HBM per chip
  // cannot hold it.
  const auto r = run("run '" + example("tiny-trn1.json") + "' --strict --set cluster.chip.hbm_GiB=0.001");
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("out_of_memory"));
}

TEST_CASE("cli: --max-memory reads decimal and binary units, kB and KB alike") {
  // tiny-trn1's step needs about 0.000132 GB to simulate, more than any of these limits: the
  // refusal quotes the limit in GB, 1e3 bytes for kB and KB, 1,024 for KiB (1.02e-06 GB).
  auto refusal = [](const std::string& size) {
    const auto r = run("run '" + example("tiny-trn1.json") + "' --max-memory " + size);
    INFO(r.err);
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK_THAT(refusal("1kB"), Catch::Contains("more than the limit of 1e-06 GB"));
  CHECK(refusal("1KB") == refusal("1kB"));
  CHECK_THAT(refusal("1KiB"), Catch::Contains("more than the limit of 1.02e-06 GB"));
  CHECK_THAT(refusal("1XB"), Catch::Contains("--max-memory 1XB: expected a positive size in bytes"));
}

TEST_CASE("cli: an output that cannot be written fails the command before it writes the others") {
  // Outputs are checked before the simulation: the writable --json is not written either.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("trnsim-outputs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string json_out = (dir / "first.json").string(), csv_out = (dir / "missing" / "x.csv").string();
  const auto r = run("run '" + example("tiny-trn1.json") + "' --json '" + json_out + "' --csv '" + csv_out + "'");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(csv_out + ": cannot create the file"));
  CHECK_FALSE(std::filesystem::exists(json_out));
  CHECK(std::filesystem::is_empty(dir));  // no temporary left behind
  // A CSV of another kind is refused by its first line, before the JSON too.
  const std::string other = (dir / "other.csv").string();
  std::ofstream(other) << "name,value\nx,1\n";
  const auto appended = run("run '" + example("tiny-trn1.json") + "' --json '" + json_out + "' --csv '" + other + "'");
  CHECK(appended.code == 2);
  CHECK_THAT(appended.err, Catch::Contains("cannot append: its first line is not the expected header"));
  CHECK_FALSE(std::filesystem::exists(json_out));
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: a bad experiment file exits 2 and names the file and the JSON path") {
  const fs::path bad = scratch("bad.json");
  {
    auto doc = nlohmann::json::parse(slurp(example("tiny-trn1.json")));
    doc["training"]["seqlen"] = 128;
    std::ofstream(bad) << doc.dump(2);
  }
  const auto r = run("run '" + bad.string() + "' --dry-run");
  fs::remove(bad);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(bad.string() + ": /training/seqlen: unknown key"));
  CHECK(r.out.empty());
}

TEST_CASE("cli: a bad override exits 2 and names it") {
  const auto r = run("run '" + example("tiny-trn1.json") + "' --dry-run --set parallelism.tpp=2");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("--set parallelism.tpp=2: /parallelism/tpp does not exist"));
}

TEST_CASE("cli: a context-parallel degree that cannot split the sequence exits 2 naming /parallelism/cp") {
  // tiny-trn1: seq_len 128; load balancing cuts it into 2 x cp = 6 chunks, which 128 is not a multiple of.
  const auto r = run("run '" + example("tiny-trn1.json") + "' --dry-run --set parallelism.cp=3");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/parallelism/cp: 2 x cp = 6 does not divide seq_len (128)"));
}

TEST_CASE("cli: an unknown option is a usage error, exit 2") {
  CHECK(run("run --no-such-flag").code == 2);
}

TEST_CASE("cli: an override outside its physical range exits 2 naming path, range and value") {
  // Three overrides that used to exit 3 ("sim::Time: seconds value out of range") instead of 2.
  const std::vector<std::pair<std::string, std::string>> cases{
      {"cluster.calibration.task_overhead_us=1e30",
       "/cluster/calibration/task_overhead_us: expected a number in [0, 1e+06], found 1e+30"},
      {"cluster.chip.peak.bf16_tflops=1e308",
       "/cluster/chip/peak/bf16_tflops: expected a number in [0.001, 1e+06], found 1e+308"},
      {"cluster.chip.dma_bandwidth_GBps=1e-300",
       "/cluster/chip/dma_bandwidth_GBps: expected 0 (not known: core-to-core copies at half the HBM bandwidth) or a number in [0.001, 1e+07], found 1e-300"}};
  for (const auto& [set, message] : cases) {
    INFO(set);
    const auto r = run("run '" + example("tiny-trn1.json") + "' --set " + set);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("(with --set " + set + "): " + message));
    CHECK(r.out.empty());
  }
}

TEST_CASE("cli: the --dry-run output, run with --dry-run again, prints itself") {
  const fs::path resolved = scratch("resolved.json");
  const auto first = run("run '" + example("llama3.1-8b-trn2.json") + "' --dry-run --set cluster.fabric.leaf_radix=32");
  REQUIRE(first.code == 0);
  std::ofstream(resolved) << first.out;
  const auto again = run("run '" + resolved.string() + "' --dry-run");
  fs::remove(resolved);
  REQUIRE(again.code == 0);
  CHECK(again.out == first.out);
}
