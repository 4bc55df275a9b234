// libFuzzer harness: a trnsim JSON trace's bytes through the reader `trnsim run` uses (the
// streaming reader, the DOM reader when it gives up) and the trace checks (build_trace). Beside
// "a result or an InputError", it checks that the two readers agree: the streaming reader must
// accept exactly what the DOM reader accepts, read the same document, and leave every message to
// the DOM reader. A disagreement aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "fuzz_guard.hpp"
#include "trnsim/trace/trace.hpp"

namespace {

using namespace trnsim::trace;

// Every field a reader fills, as text (doubles exactly, by their bits' shortest form).
std::string describe(const TraceDocument& d) {
  std::string s = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}\n", d.file, d.format, d.version, d.cluster_instance, d.cluster_count,
                              static_cast<int>(d.dtype), d.source.dump(), d.total_ranks);
  for (const auto& g : d.groups) s += fmt::format("g {} [{}]\n", g.group_size, fmt::join(g.ranks, ","));
  for (const auto& p : d.pairs) {
    s += "p";
    for (const auto& [a, b] : p) s += fmt::format(" {}-{}", a, b);
    s += "\n";
  }
  for (const auto& w : d.works) {
    s += fmt::format("w {} {} {}", w.name, w.measured_s, w.kernels.size());
    for (const auto& k : w.kernels)
      s += fmt::format(" ({} {} {} {} {} {} {} {} {} {} {} {} {} {})", k.name, static_cast<int>(k.op), k.m, k.n, k.k, k.batch,
                       static_cast<int>(k.causal), k.flops, k.vector_elements, k.scalar_elements, k.hbm_bytes, k.low_precision,
                       k.element_bytes, k.fused_epilogue);
    s += "\n";
  }
  for (const auto& r : d.ranks) {
    s += fmt::format("r {} {}\n", r.rank, r.stage);
    for (const auto& n : r.nodes)
      s += fmt::format("n {} {} {} {} {} {} {} {} {} {} {} {} {} [{}]\n", n.id, n.name, static_cast<int>(n.kind),
                       static_cast<int>(n.category), n.layer, n.micro_batch, n.work, static_cast<int>(n.op), n.bytes, n.group,
                       n.peer, n.tag, n.pairs, fmt::join(n.deps, ","));
  }
  return s;
}

// The DOM reader alone: the document, or its message.
std::string dom_reading(const std::string& text) {
  try {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      return fmt::format("error: fuzz.json: not valid JSON (byte {}): {}", e.byte, e.what());
    } catch (const nlohmann::json::exception& e) {
      return fmt::format("error: fuzz.json: not valid JSON: {}", e.what());
    }
    return describe(parse_trace_json(j, "fuzz.json"));
  } catch (const trnsim::InputError& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = trnsim::fuzz::text_of(data, size);
  std::string streamed;
  try {
    const TraceDocument doc = parse_trace_json_text(text, "fuzz.json");
    streamed = describe(doc);
    trnsim::fuzz::expect_input_error_at_most([&] { (void)build_trace(doc); });
  } catch (const trnsim::InputError& e) {
    streamed = std::string("error: ") + e.what();
  }
  const std::string reference = dom_reading(text);
  if (streamed != reference) {
    std::fprintf(stderr, "the readers disagree\nstreaming:\n%s\nDOM:\n%s\n", streamed.c_str(), reference.c_str());
    std::abort();
  }
  return 0;
}
