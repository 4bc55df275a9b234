// config::load_cluster with --set overrides: `trnsim collective` replotted with a hardware figure
// changed, the cluster block edited as `trnsim run --set` edits an experiment's.
#include <fmt/format.h>

#include "parse.hpp"
#include "resolve.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/error.hpp"

namespace trnsim::config {

hw::ClusterSpec load_cluster(const std::string& name, int instances, const std::vector<std::string>& override_texts,
                             const std::string& label) {
  if (override_texts.empty()) return load_cluster(name, instances);
  using namespace detail;
  std::string with_label;
  const std::vector<Override> overrides = parse_overrides(override_texts, label, with_label);
  for (const Override& o : overrides) {
    if (o.keys.front() != "cluster")
      throw InputError(fmt::format("{}: --set {}: expected a path in the cluster block (cluster.KEY..., as in an "
                                   "experiment's \"cluster\"), found /{}",
                                   label, o.text, fmt::join(o.keys, "/")));
    // One way to name the preset: a second would also have to decide the default size.
    if (o.selects_preset())
      throw InputError(fmt::format("{}: --set {}: /cluster/instance is --instance's; expected a path inside the "
                                   "cluster such as cluster.intra.bandwidth_GBps",
                                   label, o.text));
  }
  const json document{{"cluster", {{"instance", name}, {"count", instances}}}};
  const auto cluster_of = [](const json& expanded, const std::string& doc_label) {
    return parse_cluster(ObjectReader(expanded, doc_label, "").object("cluster"));
  };
  const json expanded =
      apply_overrides(document, overrides, label, with_label, [&](const json& doc, const std::string& doc_label) {
        json resolved = doc;
        resolve_cluster(resolved.at("cluster"), cluster_of(doc, doc_label));
        return resolved;
      });
  return cluster_of(expanded, with_label);
}

}  // namespace trnsim::config
