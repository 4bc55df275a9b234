// libFuzzer harness: `--set PATH=VALUE` overrides on configs/examples/tiny-trn1.json, one per
// line of the input (at most 8), through parse_experiment as `trnsim run FILE --set ...` does.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_guard.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/json_file.hpp"
#include "trnsim/config/presets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file = trnsim::config::config_dir() + "/examples/tiny-trn1.json";
  static const nlohmann::json base = trnsim::config::read_json_file(file);
  std::vector<std::string> overrides;
  std::istringstream lines(trnsim::fuzz::text_of(data, size));
  for (std::string line; std::getline(lines, line) && overrides.size() < 8;) overrides.push_back(line);
  trnsim::fuzz::expect_input_error_at_most([&] { (void)trnsim::config::parse_experiment(base, file, overrides); });
  return 0;
}
