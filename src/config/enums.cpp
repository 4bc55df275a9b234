// Spellings of the network model, in the enum's declaration order; the static_assert below
// catches an enum that grows without its spelling.
#include "trnsim/config/enums.hpp"

namespace trnsim::config {

template <>
const std::vector<std::string_view>& names_of<NetworkModelKind>() {
  static const std::vector<std::string_view> names{"analytic", "flow"};
  return names;
}

static_assert(static_cast<int>(NetworkModelKind::Flow) == 1);

}  // namespace trnsim::config
