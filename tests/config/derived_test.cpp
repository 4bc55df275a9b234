// The tensor engine's speed is declared once, as the chip's published BF16 peak (what MFU is quoted
// against). The PE-array clock the cost model tiles at follows from it: config derives it, shows it
// under "derived", and refuses it as an input. Expected clocks are computed here from the published
// peaks (trn1 190, trn2 667 TFLOPS per chip; 128 x 128 PE arrays; 2 and 8 cores per chip).
#include <catch2/catch.hpp>

#include "support.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/presets.hpp"

using namespace trnsim;
using test::input_error;
using test::small_experiment;

namespace {
const std::string kDerivedFile = "x.json";
const std::string kRule = "(Trainium: bf16_tflops / (2 x pe_rows x pe_cols x physical_cores))";

std::string derived_error(const nlohmann::json& doc, const std::vector<std::string>& overrides = {}) {
  return input_error([&] { config::parse_experiment(doc, kDerivedFile, overrides); });
}
}  // namespace

TEST_CASE("derived: the tensor clock is the chip's BF16 peak over its PE arrays") {
  // trn1: 190e12 / (2 x 128 x 128 x 2) = 2.899 GHz (the NKI guide's 2.8 GHz gave 183.5 TFLOPS).
  CHECK(config::load_instance("trn1.32xlarge").chip.core.tensor_clock_hz == Approx(190e12 / 65536));
  // trn2: 667e12 / (2 x 128 x 128 x 8) = 2.544 GHz (the NKI guide's 2.4 GHz gave 629 TFLOPS).
  CHECK(config::load_instance("trn2.48xlarge").chip.core.tensor_clock_hz == Approx(667e12 / 262144));
  // GPUs have no PE-array model: matmuls run at the published peak.
  CHECK(config::load_instance("dgx-a100-80gb").chip.core.tensor_clock_hz == 0);
  // Invariant over every Trainium preset: full tiles on every core at the clock give the peak.
  for (const auto& name : config::list_presets().instances) {
    const hw::ChipSpec c = config::load_instance(name).chip;
    if (c.family != hw::Family::Trainium) continue;
    INFO(name);
    CHECK(2.0 * c.core.pe_rows * c.core.pe_cols * c.core.tensor_clock_hz * c.physical_cores == Approx(c.peak.bf16));
  }
}

TEST_CASE("derived: the resolved experiment shows the clock under derived, and it follows the peak") {
  const auto ex = config::parse_experiment(small_experiment(), kDerivedFile);  // trn1.32xlarge
  const auto& core = ex.resolved["cluster"]["chip"]["core"];
  CHECK(core["derived"]["tensor_clock_GHz"] == Approx(190e3 / 65536));
  CHECK_FALSE(core.contains("tensor_clock_GHz"));
  // Twice the peak: twice the clock, in the struct and in the resolved JSON.
  const auto twice = config::parse_experiment(small_experiment(), kDerivedFile, {"cluster.chip.peak.bf16_tflops=380"});
  CHECK(twice.cluster.instance.chip.core.tensor_clock_hz == Approx(2 * 190e12 / 65536));
  CHECK(twice.resolved["cluster"]["chip"]["core"]["derived"]["tensor_clock_GHz"] == Approx(2 * 190e3 / 65536));
  // The same from a partial override of the preset in the file.
  auto doc = small_experiment();
  doc["cluster"]["chip"] = {{"peak", {{"bf16_tflops", 380}}}};
  CHECK(config::parse_experiment(doc, kDerivedFile).resolved == twice.resolved);
}

TEST_CASE("derived: the tensor clock is no input, from a file or from --set") {
  const std::string from = "derived from /cluster/chip/peak/bf16_tflops " + kRule;
  CHECK(derived_error(small_experiment(), {"cluster.chip.core.tensor_clock_GHz=4.8"}) ==
        kDerivedFile + " (with --set cluster.chip.core.tensor_clock_GHz=4.8): /cluster/chip/core/tensor_clock_GHz: " + from +
            ", not an input: set that instead");
  auto doc = small_experiment();
  doc["cluster"]["chip"] = {{"core", {{"tensor_clock_GHz", 2.8}}}};
  CHECK(derived_error(doc) == kDerivedFile + ": /cluster/chip/core/tensor_clock_GHz: " + from + ", not an input: set that instead");
  // The derived value itself may be read back (a --dry-run output), but only as derived.
  CHECK(derived_error(small_experiment(), {"cluster.chip.core.derived.tensor_clock_GHz=3"}) ==
        kDerivedFile + " (with --set cluster.chip.core.derived.tensor_clock_GHz=3): /cluster/chip/core/derived/tensor_clock_GHz: " +
            from + ": 2.899169921875, found 3; it is output only: remove it or set that instead");
  auto resolved = config::parse_experiment(small_experiment(), kDerivedFile).resolved;
  resolved["cluster"]["chip"]["core"]["derived"]["pe_clock_GHz"] = 1;
  CHECK(derived_error(resolved) ==
        kDerivedFile + ": /cluster/chip/core/derived/pe_clock_GHz: unknown key (derived here: tensor_clock_GHz)");
}
