#pragma once
// Helpers for config tests: a small valid experiment to mutate, and the message of an InputError.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "trnsim/error.hpp"

namespace trnsim::test {

inline std::string source_path(const std::string& relative) {
  return std::string(TRNSIM_TEST_SOURCE_DIR) + "/" + relative;
}

// One trn1.32xlarge (32 NeuronCores) training a Llama-2-7B-shaped model with TP 8 x DP 4.
inline nlohmann::json small_experiment() {
  return nlohmann::json::parse(R"({
    "name": "small",
    "cluster": {"instance": "trn1.32xlarge", "count": 1},
    "model": {"name": "m", "layers": 4, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 11008,
              "vocab": 32000, "mlp": "swiglu", "norm": "rmsnorm"},
    "training": {"seq_len": 4096, "global_batch": 64, "micro_batch": 1, "dtype": "bf16", "optimizer": "adamw"},
    "parallelism": {"tp": 8, "pp": 1, "dp": 4}
  })");
}

// The what() of the InputError `f` throws, or "" when it throws none.
inline std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace trnsim::test
