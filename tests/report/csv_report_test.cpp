#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "report_support.hpp"
#include "trnsim/error.hpp"
#include "trnsim/report/writers/csv_report.hpp"

using namespace trnsim;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
  if (!line.empty() && line.back() == ',') out.emplace_back();  // an empty last field
  return out;
}

}  // namespace

TEST_CASE("csv report: rows append under a single header") {
  const auto a = test::analyse_file("configs/examples/tiny-trn1.json");
  const fs::path file = fs::temp_directory_path() / ("trnsim_csv_" + std::to_string(::getpid()) + ".csv");
  fs::remove(file);
  const report::RunLabel label{"configs/examples/tiny-trn1.json", "tiny-trn1"};
  report::append_csv(file.string(), a.report, label);
  report::append_csv(file.string(), a.report, label);
  const auto lines = lines_of(file);
  REQUIRE(lines.size() == 3);  // header + 2 rows: the header is not repeated
  CHECK(lines[0] == report::csv_header());
  CHECK(lines[1] == lines[2]);  // same report, same bytes
  const auto header = fields_of(lines[0]);
  const auto row = fields_of(lines[1]);
  REQUIRE(header.size() == 24);
  REQUIRE(row.size() == header.size());
  auto column = [&](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return row[i];
    }
    FAIL("no column " << name);
    return std::string();
  };
  // The tiny example: 1 x trn1.2xlarge (1 chip), TP 2, PP 1, DP 1, micro-batch 1, 1F1B, no
  // recompute, no SP, ZeRO-0, analytic network.
  CHECK(column("experiment_id") == "tiny-trn1");
  CHECK(column("model") == "tiny-decoder");
  CHECK(column("instance") == "trn1.2xlarge");
  CHECK(column("chips") == "1");
  CHECK(column("tp") == "2");
  CHECK(column("pp") == "1");
  CHECK(column("dp") == "1");
  CHECK(column("schedule") == "1f1b");
  CHECK(column("recompute") == "none");
  CHECK(column("sequence_parallel") == "false");
  CHECK(column("network") == "analytic");
  CHECK(column("fits") == "true");
  CHECK(std::stod(column("step_time_s")) == Approx(a.report.step_time_s).epsilon(1e-5));
  // tokens/s = global batch 8 x 128 tokens / step time.
  CHECK(std::stod(column("tokens_per_s")) == Approx(8 * 128 / a.report.step_time_s).epsilon(1e-5));
  fs::remove(file);
}

TEST_CASE("csv report: appending to a file with another header is an input error") {
  const auto a = test::analyse_file("configs/examples/tiny-trn1.json");
  const fs::path file = fs::temp_directory_path() / ("trnsim_csv_other_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(file);
    out << "size,time\n1,2\n";
  }
  CHECK_THROWS_AS(report::append_csv(file.string(), a.report, {"x.json", "x"}), InputError);
  CHECK(lines_of(file).size() == 2);  // untouched
  fs::remove(file);
}
