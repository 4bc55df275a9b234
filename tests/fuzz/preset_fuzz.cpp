// libFuzzer harness: the preset parsers. The first byte chooses the kind (hardware, model,
// software, collective library), the rest is the file's bytes, read as load_instance,
// load_model, load_software and a software's collective library read theirs.
#include <cstddef>
#include <cstdint>

#include "fuzz_guard.hpp"
#include "parse.hpp"
#include "trnsim/config/json_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trnsim::config;
  if (size == 0) return 0;
  const int kind = data[0] % 4;
  trnsim::fuzz::expect_input_error_at_most([&] {
    nlohmann::json document = parse_json_text(trnsim::fuzz::text_of(data + 1, size - 1), "preset.json");
    switch (kind) {
      case 0: (void)detail::parse_instance_file(document, "preset.json"); break;
      case 1: (void)detail::parse_model(document, "preset.json", ""); break;
      case 2:
        // As presets.cpp's software_from: the file's "name" becomes the object's "preset".
        if (document.is_object()) {
          document.erase("name");
          document["preset"] = "fuzz";
        }
        (void)detail::parse_software(detail::ObjectReader(document, "preset.json", ""));
        break;
      default: (void)detail::parse_collectives(document, "preset.json"); break;
    }
  });
  return 0;
}
