// libFuzzer harness: an experiment file's bytes through the same path `trnsim run FILE` takes
// (JSON parse, preset expansion, field tables, plan validation).
#include <cstddef>
#include <cstdint>

#include "fuzz_guard.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  trnsim::fuzz::expect_input_error_at_most([&] {
    const auto document = trnsim::config::parse_json_text(trnsim::fuzz::text_of(data, size), "fuzz.json");
    (void)trnsim::config::parse_experiment(document, "fuzz.json");
  });
  return 0;
}
