// The cluster's collective figures from the hardware's statements and the runtime release the
// software runs (contract in trnsim/config/experiment.hpp).
#include <fmt/format.h>

#include "json_reader.hpp"
#include "trnsim/config/experiment.hpp"

namespace trnsim::config {

void apply_collective_runtime(hw::InstanceSpec& instance, const net::CollectivePolicy& library,
                              const std::string& file) {
  hw::Calibration& cal = instance.calibration;
  const net::RuntimeRelease* release = library.runtime();
  const auto pick = [&](const std::optional<double>& stated, double net::RuntimeRelease::*from, const char* key) {
    if (stated) return *stated;
    if (release != nullptr) return release->*from;
    detail::fail(file, fmt::format("/cluster/calibration/{}", key),
                 fmt::format("missing: the hardware states no figure and the collective library {} no runtime "
                             "release that gives it",
                             library.library.empty() ? std::string("(none)") : library.library));
  };
  cal.collective_launch_s = pick(cal.stated.launch_s, &net::RuntimeRelease::launch_s, "collective_launch_us");
  cal.collective_step_s = pick(cal.stated.step_s, &net::RuntimeRelease::step_s, "collective_step_us");
  cal.collective_message_s = pick(cal.stated.message_s, &net::RuntimeRelease::message_s, "collective_message_us");
  // A stream moves what its collective core's DMA engines stream, at the release's efficiency;
  // where the chip publishes no engines (GPUs) or no release is run, only the links limit it.
  if (cal.stated.stream_bandwidth) {
    cal.collective_stream_bandwidth = *cal.stated.stream_bandwidth;
  } else {
    const double dma = instance.chip.collective_stream_dma();
    cal.collective_stream_bandwidth = release != nullptr && dma > 0 ? dma * release->stream_efficiency : 0;
  }
}

}  // namespace trnsim::config
