#pragma once
// Runs the built trnsim executable as a user runs it, capturing exit code, stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace trnsim::test {


namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline fs::path scratch(const std::string& name) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         ("trnsim-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name);
}

// Runs `trnsim ARGS` (ARGS already shell-quoted) with stdout and stderr captured.
inline Result run(const std::string& args) {
  const fs::path out = scratch("out"), err = scratch("err");
  const std::string cmd =
      std::string("'") + TRNSIM_TEST_BINARY + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

inline std::string example(const std::string& name) {
  return std::string(TRNSIM_TEST_SOURCE_DIR) + "/configs/examples/" + name;
}


}  // namespace trnsim::test
