// trnsim sweep --html and trnsim merge --html as a user runs them: merged shards write byte for
// byte the page of the unsharded sweep, and bad --axes or --metric are input errors.
#include <catch2/catch.hpp>

#include <string>

#include <fmt/core.h>

#include "run_cli.hpp"

using namespace trnsim::test;

namespace {

// tiny-trn1 over 12 points (counted by hand in sweep_cli_test.cpp): 6 invalid, 6 simulated.
Result sweep_tiny(const std::string& more) {
  return run(fmt::format("sweep '{}' --tp 1,2 --pp 1,2 --micro-batch 1,2,3 {}", example("tiny-trn1.json"), more));
}

}  // namespace

TEST_CASE("cli sweep --html: merged shards write the page of the unsharded sweep", "[cli][sweep][html]") {
  const fs::path whole = scratch("whole.html"), merged = scratch("merged.html");
  const fs::path p0 = scratch("p0.json"), p1 = scratch("p1.json"), p2 = scratch("p2.json");
  REQUIRE(sweep_tiny(fmt::format("--threads 2 --html '{}' --axes pp,mb --metric mfu", whole.string())).code == 0);
  for (int i = 0; i < 3; ++i)
    REQUIRE(sweep_tiny(fmt::format("--shard {}/3 --json '{}'", i, (i == 0 ? p0 : i == 1 ? p1 : p2).string())).code == 0);
  const auto m = run(fmt::format("merge '{}' '{}' '{}' --html '{}' --axes pp,mb --metric mfu", p2.string(), p0.string(),
                                 p1.string(), merged.string()));
  REQUIRE(m.code == 0);
  const std::string page = slurp(whole);
  CHECK(slurp(merged) == page);
  // The chosen axes and metric, and the 6 simulated plans ranked.
  CHECK_THAT(page, Catch::Contains("Best MFU by pp and micro_batch"));
  CHECK_THAT(page, Catch::Contains("Ranked plans (6 simulated)"));
  CHECK_THAT(page, Catch::Contains("Pruned plans (6 not simulated)"));
  for (const fs::path& p : {whole, merged, p0, p1, p2}) fs::remove(p);
}

TEST_CASE("cli sweep --html: bad --axes and --metric are input errors (exit 2)", "[cli][sweep][html]") {
  const fs::path page = scratch("bad.html");
  const auto bad_axis = sweep_tiny(fmt::format("--html '{}' --axes tp,heads", page.string()));
  CHECK(bad_axis.code == 2);
  CHECK_THAT(bad_axis.err, Catch::Contains("--axes") && Catch::Contains("no axis \"heads\""));
  // Checked before the sweep runs: no page, no table.
  CHECK_FALSE(fs::exists(page));
  CHECK(bad_axis.out.empty());
  CHECK(sweep_tiny(fmt::format("--html '{}' --axes tp", page.string())).code == 2);
  CHECK(sweep_tiny(fmt::format("--html '{}' --metric speed", page.string())).code == 2);
  // --axes means nothing without --html.
  CHECK(sweep_tiny("--axes tp,pp").code == 2);
  CHECK_FALSE(fs::exists(page));
}
