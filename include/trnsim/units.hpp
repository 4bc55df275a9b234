#pragma once
// Unit factors between human units (configuration keys, report columns) and the SI values used
// inside trnsim (bytes, bytes/s, seconds, FLOP/s, Hz). GB = 1e9 bytes, GiB = 2^30 bytes,
// Gbps = 1e9 bits/s. Kept at the top of include/trnsim, like error.hpp: every layer converts.
namespace trnsim::units {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1048576.0;
inline constexpr double kGiB = 1073741824.0;
inline constexpr double kTiB = kGiB * 1024.0;
inline constexpr double kMB = 1e6;
inline constexpr double kGB = 1e9;
inline constexpr double kGbps = 1e9 / 8;   // bytes/s per Gbit/s
inline constexpr double kMicro = 1e-6;     // seconds per microsecond
inline constexpr double kGHz = 1e9;
inline constexpr double kTera = 1e12;      // FLOP/s per TFLOPS

}  // namespace trnsim::units
