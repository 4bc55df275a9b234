#pragma once
// What every harness checks: the code under test either returns or throws trnsim::InputError
// (the CLI's exit 2). Any other exception escapes the harness and libFuzzer reports it as a
// crash, as it does the sanitizers' findings: the CLI would have answered "internal error" (exit 3).
#include <cstddef>
#include <cstdint>
#include <string>

#include "trnsim/error.hpp"

namespace trnsim::fuzz {

template <class Fn>
void expect_input_error_at_most(Fn&& fn) {
  try {
    fn();
  } catch (const trnsim::InputError&) {
    // bad input, named: what the CLI turns into exit 2
  }
}

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace trnsim::fuzz
