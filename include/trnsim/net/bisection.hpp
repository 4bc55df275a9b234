#pragma once
#include "trnsim/net/topology.hpp"

namespace trnsim::net {

// Bandwidth (bytes/s, one direction) across the cut that splits the chips into the first and the
// second half by chip index (whole instances when there are several), computed as the maximum
// flow from the first half to the second over every link (Boost push-relabel). 0 for one chip.
double bisection_bandwidth(const Topology& t);

}  // namespace trnsim::net
