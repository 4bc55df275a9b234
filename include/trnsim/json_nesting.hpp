#pragma once
// A guard every JSON reader runs on a document's text before parsing it. nlohmann's parser keeps
// its own stack, but copying, comparing and dumping a parsed value recurse once per level: an
// array nested 200,000 deep overflowed the stack (a segfault, not an error) wherever an
// experiment file was read. trnsim's files nest a few levels (an experiment 4, a report 6, a
// Chakra node 5), so a deeper document is refused before anything parses it. A byte scan, no
// allocation: it costs what reading the text costs. Kept at the top of include/trnsim, like
// error.hpp, for every layer that reads JSON (config, trace).
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim {

// Deeper than trnsim's own files by far, and far from what overflows the stack.
inline constexpr int kMaxJsonNesting = 100;

// Contract: throws InputError naming `file`, the line and column where arrays and objects first
// nest deeper than `max_depth`; otherwise nothing (malformed JSON is left to the parser). O(size).
inline void check_json_nesting(std::string_view text, const std::string& file, int max_depth = kMaxJsonNesting) {
  int depth = 0;
  bool quoted = false;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw InputError(fmt::format("{}: line {}, column {}: expected arrays and objects nested at most {} levels deep, "
                                     "found deeper nesting",
                                     file, line, i - line_start + 1, max_depth));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

}  // namespace trnsim
