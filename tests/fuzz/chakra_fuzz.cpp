// libFuzzer harness: Chakra trace files through the path `trnsim run` takes for a Chakra trace
// (trace::parse_chakra, what read_chakra does once it has the files' bytes, then build_trace's
// cross-node checks). The first byte picks the form:
//   '0'  the rest is rank 0's binary .et file (varint-length-delimited protobuf), the only rank
//   '1'  the same in Chakra's JSON rendering (.json)
//   '2'  binary: the group file's text (none when empty), a NUL byte, then the ranks' files
//        separated by kRankBreak
//   '3'  the same in the JSON rendering
// (any other first byte is read as its value modulo 4).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_guard.hpp"
#include "trnsim/trace/chakra.hpp"
#include "trnsim/trace/trace.hpp"

namespace {

constexpr std::string_view kRankBreak = "\n--rank--\n";
constexpr std::size_t kMaxRanks = 16;  // more ranks add no new code, only time

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trnsim::trace;
  if (size == 0) return 0;
  const int mode = data[0] % 4;
  const ChakraEncoding encoding = mode % 2 == 0 ? ChakraEncoding::Binary : ChakraEncoding::Json;
  const std::string ext = encoding == ChakraEncoding::Binary ? ".et" : ".json";
  const std::string input = trnsim::fuzz::text_of(data + 1, size - 1);
  ChakraFile groups;
  std::vector<ChakraFile> ranks;
  if (mode < 2) {
    ranks.push_back({"fuzz.0" + ext, input});
  } else {
    const std::size_t nul = input.find('\0');
    if (nul > 0) groups = {"fuzz.groups.json", input.substr(0, nul)};  // empty: no group file
    std::string_view rest = nul == std::string::npos ? std::string_view() : std::string_view(input).substr(nul + 1);
    while (ranks.size() < kMaxRanks) {
      const std::size_t cut = rest.find(kRankBreak);
      ranks.push_back({"fuzz." + std::to_string(ranks.size()) + ext, std::string(rest.substr(0, cut))});
      if (cut == std::string_view::npos) break;
      rest.remove_prefix(cut + kRankBreak.size());
    }
  }
  trnsim::fuzz::expect_input_error_at_most([&] { (void)build_trace(parse_chakra("fuzz", ranks, groups, encoding)); });
  return 0;
}
