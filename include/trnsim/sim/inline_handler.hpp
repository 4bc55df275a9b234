#pragma once
// InlineHandler: a move-only `void()` callable whose captures live inside the object, so that
// storing an event handler never allocates. Captures larger than kInlineHandlerBytes are rejected
// at compile time (static_assert, no heap fallback): the engine's hot path must not allocate per
// event, and a big capture is better expressed as a pointer or an index into state owned elsewhere.
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "trnsim/error.hpp"

namespace trnsim::sim {

// Bytes of capture storage. 48 fits six pointers or a std::function; with the operations pointer
// the handler is 56 bytes, so an engine event record (handler + serial) fills one 64-byte line.
inline constexpr std::size_t kInlineHandlerBytes = 48;
// Pointer alignment, not max_align_t's 16: it keeps the handler at 56 bytes instead of 64.
inline constexpr std::size_t kInlineHandlerAlign = alignof(void*);

class InlineHandler {
 public:
  InlineHandler() noexcept = default;

  // Contract: stores f inside the object (no allocation); f must be invocable as f() and
  // nothrow-movable, at most kInlineHandlerBytes big, aligned at most like a pointer (8 bytes).
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, InlineHandler>>>
  InlineHandler(F&& f) {  // NOLINT(google-explicit-constructor): lambdas convert implicitly
    emplace(std::forward<F>(f));
  }

  InlineHandler(const InlineHandler&) = delete;
  InlineHandler& operator=(const InlineHandler&) = delete;
  InlineHandler(InlineHandler&& other) noexcept { take(other); }
  InlineHandler& operator=(InlineHandler&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  ~InlineHandler() { reset(); }

  // Contract: destroys any held callable, then constructs a decayed copy of f in place.
  // Cost: one constructor of F; if it throws, the handler is left empty.
  template <class F>
  void emplace(F&& f) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&>, "an event handler must be callable with no arguments");
    static_assert(sizeof(Fn) <= kInlineHandlerBytes,
                  "event handler captures more than kInlineHandlerBytes (48) bytes: capture a pointer "
                  "or an index to state owned elsewhere instead");
    static_assert(alignof(Fn) <= kInlineHandlerAlign,
                  "event handler captures need more than 8-byte alignment");
    static_assert(std::is_nothrow_move_constructible_v<Fn>, "event handler must be nothrow-movable");
    reset();
    ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
    ops_ = &kOpsFor<Fn>;
  }

  // Contract: destroys the held callable (if any); afterwards the handler is empty. O(1).
  void reset() noexcept {
    if (ops_ != nullptr && ops_->destroy != nullptr) ops_->destroy(storage_);
    ops_ = nullptr;
  }

  explicit operator bool() const noexcept { return ops_ != nullptr; }

  // Contract: calls the held callable; throws InternalError when empty (calling nothing is a bug).
  // Cost: one indirect call.
  void operator()() {
    if (ops_ == nullptr) throw InternalError("sim::InlineHandler: called while empty");
    ops_->invoke(storage_);
  }

 private:
  struct Ops {
    void (*invoke)(void*);
    void (*relocate)(void* dst, void* src) noexcept;  // move-construct at dst, destroy src
    void (*destroy)(void*) noexcept;                   // nullptr when trivially destructible
  };

  template <class Fn>
  static Fn* as(void* p) noexcept {
    return std::launder(reinterpret_cast<Fn*>(p));
  }
  template <class Fn>
  static void invoke_fn(void* p) {
    (*as<Fn>(p))();
  }
  template <class Fn>
  static void relocate_fn(void* dst, void* src) noexcept {
    Fn* from = as<Fn>(src);
    ::new (dst) Fn(std::move(*from));
    from->~Fn();
  }
  template <class Fn>
  static void destroy_fn(void* p) noexcept {
    as<Fn>(p)->~Fn();
  }
  template <class Fn>
  static constexpr Ops kOpsFor{&invoke_fn<Fn>, &relocate_fn<Fn>,
                               std::is_trivially_destructible_v<Fn> ? nullptr : &destroy_fn<Fn>};

  void take(InlineHandler& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->relocate(storage_, other.storage_);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }

  alignas(kInlineHandlerAlign) std::byte storage_[kInlineHandlerBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace trnsim::sim
