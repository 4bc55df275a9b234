#pragma once
// The casts between the plan's int64 counts and the indexes and rates that use them, which several
// step-building files need: one definition, so that files compiled together (a unity build) do not
// define the same helper twice.

#include <cstddef>
#include <cstdint>

namespace trnsim::workload::narrow {

inline double dbl(std::int64_t v) { return static_cast<double>(v); }
inline std::size_t idx(std::int64_t v) { return static_cast<std::size_t>(v); }

}  // namespace trnsim::workload::narrow
