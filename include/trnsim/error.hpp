#pragma once
// Typed errors shared by every layer. Library code throws; only the CLI's main decides exit codes
// (InputError -> 2). Kept at the top of include/trnsim because every layer may raise bad-input errors.
#include <stdexcept>
#include <string>
#include <utility>

namespace trnsim {

// Bad user input: a file, a JSON path, an override or a plan that cannot be simulated.
// what() is the complete message the user sees, e.g.
// "configs/examples/x.json: /parallelism/tp: 12 does not divide heads (32)".
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // `reason`: the rule that was broken, without this input's values ("tp does not divide heads"),
  // so that the errors of many inputs can be counted by kind (`trnsim sweep`).
  InputError(const std::string& message, std::string reason)
      : std::runtime_error(message), reason_(std::move(reason)) {}
  // The rule, or "" when the thrower named none.
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

// A broken invariant inside trnsim (a bug, never the user's fault).
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace trnsim
