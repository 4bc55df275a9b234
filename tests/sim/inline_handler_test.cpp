#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <utility>

#include "trnsim/error.hpp"
#include "trnsim/sim/inline_handler.hpp"

using trnsim::sim::InlineHandler;

TEST_CASE("inline handler: calls the stored callable with its captures") {
  int sum = 0;
  const int a = 3, b = 4;
  InlineHandler h([&sum, a, b] { sum += a * b; });
  REQUIRE(static_cast<bool>(h));
  h();
  h();
  CHECK(sum == 24);  // 2 calls x 3 x 4
}

TEST_CASE("inline handler: moving transfers the callable and empties the source") {
  int calls = 0;
  InlineHandler a([&calls] { ++calls; });
  InlineHandler b(std::move(a));
  CHECK_FALSE(static_cast<bool>(a));  // NOLINT(bugprone-use-after-move): the contract under test
  REQUIRE(static_cast<bool>(b));
  b();
  InlineHandler c;
  c = std::move(b);
  c();
  CHECK(calls == 2);
  CHECK_THROWS_AS(a(), trnsim::InternalError);
}

TEST_CASE("inline handler: captured objects are destroyed exactly once on reset, move and destruction") {
  auto token = std::make_shared<int>(7);
  CHECK(token.use_count() == 1);
  {
    InlineHandler h([token] { (void)*token; });
    CHECK(token.use_count() == 2);
    InlineHandler moved(std::move(h));
    CHECK(token.use_count() == 2);  // relocated, not copied
    moved.reset();
    CHECK(token.use_count() == 1);
    moved.emplace([token] {});
    CHECK(token.use_count() == 2);
    moved.emplace([] {});  // replacing destroys the previous callable
    CHECK(token.use_count() == 1);
    moved = InlineHandler([token] {});
    CHECK(token.use_count() == 2);
  }
  CHECK(token.use_count() == 1);
}

TEST_CASE("inline handler: a std::function and a 48-byte capture fit inline") {
  int hits = 0;
  std::function<void()> f = [&hits] { ++hits; };
  InlineHandler h(std::move(f));
  h();
  struct Big {
    long v[5];
    int* out;
    void operator()() const { *out = static_cast<int>(v[0] + v[1] + v[2] + v[3] + v[4]); }
  };
  static_assert(sizeof(Big) == 48);
  int total = 0;
  InlineHandler big(Big{{1, 2, 3, 4, 5}, &total});
  big();
  CHECK(hits == 1);
  CHECK(total == 15);
}
