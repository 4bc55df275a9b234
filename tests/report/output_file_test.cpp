// report::write_output_file and append_output_file: a file is written whole or left as it was,
// and no temporary stays behind.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "trnsim/error.hpp"
#include "trnsim/report/writers/output_file.hpp"

namespace fs = std::filesystem;
using trnsim::report::append_output_file;
using trnsim::report::write_output_file;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("trnsim-output-file-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int entries(const fs::path& d) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

}  // namespace

TEST_CASE("output file: written whole, nothing else left in the directory") {
  const fs::path d = fresh_dir("whole");
  write_output_file((d / "r.json").string(), "{\"a\": 1}\n");
  CHECK(read(d / "r.json") == "{\"a\": 1}\n");
  CHECK(entries(d) == 1);
  fs::remove_all(d);
}

TEST_CASE("output file: a writer that fails half-way leaves the old file and no temporary") {
  const fs::path d = fresh_dir("fail");
  const fs::path p = d / "trace.json";
  write_output_file(p.string(), "old\n");
  CHECK_THROWS_AS(write_output_file(p.string(),
                                    [](std::ostream& out) {
                                      out << "half a tr";
                                      throw std::runtime_error("interrupted");
                                    }),
                  std::runtime_error);
  CHECK(read(p) == "old\n");
  CHECK(entries(d) == 1);
  fs::remove_all(d);
}

TEST_CASE("output file: a missing directory or a directory in the file's place is an input error") {
  const fs::path d = fresh_dir("dirs");
  CHECK_THROWS_AS(write_output_file((d / "no" / "r.json").string(), "x"), trnsim::InputError);
  CHECK_THROWS_WITH(write_output_file(d.string(), "x"), Catch::Contains("directory"));
  CHECK(entries(d) == 0);
  fs::remove_all(d);
}

TEST_CASE("output file: append writes the header once and keeps earlier rows") {
  const fs::path d = fresh_dir("append");
  const fs::path p = d / "runs.csv";
  append_output_file(p.string(), "a,b", "1,2\n");
  append_output_file(p.string(), "a,b", "3,4\n");
  CHECK(read(p) == "a,b\n1,2\n3,4\n");
  CHECK(entries(d) == 1);
  SECTION("a file with another first line is refused and left as it was") {
    const fs::path other = d / "other.csv";
    write_output_file(other.string(), "x,y\n9,9\n");
    CHECK_THROWS_WITH(append_output_file(other.string(), "a,b", "1,2\n"), Catch::Contains("x,y"));
    CHECK(read(other) == "x,y\n9,9\n");
  }
  fs::remove_all(d);
}
