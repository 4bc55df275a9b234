// The resolved experiment (what --dry-run prints and reports embed) is a complete experiment file:
// read again, it resolves to itself, for every bundled example and validation file.
#include <algorithm>
#include <filesystem>

#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/experiment.hpp"

using namespace trnsim;

TEST_CASE("round trip: every example and validation file resolves to a fixed point") {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"configs/examples", "configs/validation"})
    for (const auto& e : std::filesystem::directory_iterator(test::source_path(dir)))
      if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 18);  // 5 examples + 13 validation rows
  for (const auto& f : files) {
    INFO(f.string());
    const auto first = config::load_experiment(f.string());
    const auto again = config::parse_experiment(first.resolved, "resolved.json");
    CHECK(again.resolved == first.resolved);
    CHECK(again.resolved.dump(2) == first.resolved.dump(2));
  }
}

TEST_CASE("round trip: an override survives the round trip and changes only its value") {
  const auto base = config::parse_experiment(test::small_experiment(), "mem.json");
  const auto set = config::parse_experiment(test::small_experiment(), "mem.json", {"cluster.fabric.oversubscription=3"});
  auto expected = base.resolved;
  expected["cluster"]["fabric"]["oversubscription"] = 3;
  CHECK(set.resolved == expected);
  CHECK(config::parse_experiment(set.resolved, "resolved.json").resolved == set.resolved);
}

TEST_CASE("round trip: the fabric's spines are read, defaulted and written like every fabric field") {
  // FabricSpec::spines was in the struct but in neither the parser nor the writer: --set could not
  // reach it and the resolved experiment did not show it.
  const auto base = config::parse_experiment(test::small_experiment(), "mem.json");
  CHECK(base.cluster.fabric.spines == 8);
  CHECK(base.resolved["cluster"]["fabric"]["spines"] == 8);
  const auto set = config::parse_experiment(test::small_experiment(), "mem.json", {"cluster.fabric.spines=2"});
  CHECK(set.cluster.fabric.spines == 2);
  CHECK(set.resolved["cluster"]["fabric"]["spines"] == 2);
  auto doc = test::small_experiment();
  doc["cluster"]["fabric"] = {{"spines", 0}};
  CHECK(test::input_error([&] { config::parse_experiment(doc, "mem.json"); }) ==
        "mem.json: /cluster/fabric/spines: expected an integer in [1, 65536], found 0");
}
