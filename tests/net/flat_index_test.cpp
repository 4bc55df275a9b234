#include <catch2/catch.hpp>

#include <cstdint>

#include "trnsim/error.hpp"
#include "trnsim/net/flat_index.hpp"

using trnsim::net::FlatIndex;

TEST_CASE("FlatIndex finds every key it stored, across growth, and no other") {
  FlatIndex index;
  CHECK(index.find(7) == nullptr);  // empty: no table yet
  // Pair keys as the router builds them, (src << 32) | dst, with low bits that repeat: 5,000
  // entries force several doublings from the first 64 slots (64 -> ... -> 16,384).
  const auto key = [](std::uint64_t src, std::uint64_t dst) { return (src << 32) | dst; };
  for (std::uint32_t i = 0; i < 5000; ++i) index.insert(key(i % 50, i / 50), i);
  CHECK(index.size() == 5000);
  for (std::uint32_t i = 0; i < 5000; ++i) {
    const std::uint32_t* v = index.find(key(i % 50, i / 50));
    REQUIRE(v != nullptr);
    CHECK(*v == i);
  }
  CHECK(index.find(key(50, 0)) == nullptr);   // src 50 never stored
  CHECK(index.find(key(0, 100)) == nullptr);  // dst 100 never stored (i / 50 < 100)
}

TEST_CASE("FlatIndex refuses a key twice and the empty-slot key") {
  FlatIndex index;
  index.insert(42, 1);
  CHECK_THROWS_AS(index.insert(42, 2), trnsim::InternalError);
  CHECK(*index.find(42) == 1);  // the first value stays
  CHECK_THROWS_AS(index.insert(FlatIndex::kEmpty, 3), trnsim::InternalError);
}
