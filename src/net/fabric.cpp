#include "trnsim/net/fabric.hpp"

#include "group_set_pricing.hpp"

namespace trnsim::net {

Fabric::Fabric(const hw::ClusterSpec& cluster) : topology(cluster), router(topology) {}

// Out of line: GroupTerms is complete only here.
Fabric::~Fabric() = default;

}  // namespace trnsim::net
