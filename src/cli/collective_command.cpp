// `trnsim collective`: predicts what the Neuron collective benchmark (nccl-tests style) would
// print: size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s), GB/s meaning GiB/s there,
// algbw = size / time, busbw = algbw x the nccl-tests factor; then the average bus bandwidth. The
// algorithm column is what ran: with --algorithm auto, the software's collective library's choice.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "trnsim/config/experiment.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/error.hpp"
#include "trnsim/net/network.hpp"
#include "trnsim/units.hpp"

namespace trnsim::cli {

namespace {
struct CollectiveOptions {
  ClusterOption cluster;
  std::string op = "all-reduce", dtype = "fp32", algorithm = "auto", network = "analytic";
  std::string software;  // empty: the instance preset's default software
  std::string release;   // empty: the software's runtime release
  std::vector<std::string> overrides;  // --set cluster.PATH=VALUE
  std::uint64_t min = 1024, max = std::uint64_t{1} << 30;  // bytes
  int ranks = 0;
  double factor = 2;
};

int dtype_bytes(const std::string& t) {
  if (t == "fp32" || t == "float" || t == "int32") return 4;
  if (t == "bf16" || t == "fp16" || t == "half") return 2;
  if (t == "fp8" || t == "int8" || t == "uint8") return 1;
  if (t == "fp64" || t == "double") return 8;
  throw InputError(fmt::format("--dtype {}: expected fp32, bf16, fp16, fp8 or fp64", t));
}

int run_collective(const CollectiveOptions& o) {
  const net::CollectiveOp op = net::parse_op(o.op);
  const net::Algorithm algorithm = net::parse_algorithm(o.algorithm);
  const std::optional<net::NetworkModelKind> model = net::parse_network_model(o.network);
  if (!model) {
    throw InputError(fmt::format("--network {}: expected {}", o.network, fmt::join(net::network_model_names(), " or ")));
  }
  const auto min = static_cast<double>(o.min), max = static_cast<double>(o.max);
  if (max < min) throw InputError(fmt::format("-e {} bytes is below -b {} bytes", o.max, o.min));
  if (!(o.factor > 1)) throw InputError(fmt::format("-f {}: expected a factor above 1", o.factor));
  // Sizes are whole bytes: each row is the last one times the factor, rounded, and at least one
  // byte more (a factor of 1.0000001 would otherwise never leave 1 byte).
  const auto next_size = [&o](double size) { return std::max(size + 1, std::round(size * o.factor)); };
  constexpr int kMaxRows = 10000;
  int planned = 0;
  for (double size = min; size <= max && planned <= kMaxRows; size = next_size(size)) ++planned;
  if (planned > kMaxRows) {
    throw InputError(fmt::format("-b {} -e {} -f {}: expected at most {} sizes, found more (raise -f or narrow -b .. -e)",
                                 o.min, o.max, o.factor, kMaxRows));
  }
  const int elem = dtype_bytes(o.dtype);
  hw::ClusterSpec cluster = config::load_cluster(o.cluster.instance, o.cluster.instances(), o.overrides,
                                                       fmt::format("collective --instance {}", o.cluster.instance));
  const std::string software_name = o.software.empty() ? cluster.instance.default_software : o.software;
  if (software_name.empty()) {
    throw InputError(fmt::format("{} names no default software: give --software NAME", o.cluster.instance));
  }
  workload::SoftwareSpec software = config::load_software(software_name);
  if (!o.release.empty()) {
    software.collectives.release = o.release;
    if (software.collectives.runtime() == nullptr) {
      const std::vector<std::string> known = software.collectives.release_names();
      throw InputError(fmt::format("--release {}: expected a runtime release of collective library {} ({}), found none "
                                   "of that name",
                                   o.release, software.collectives.library,
                                   known.empty() ? std::string("it has none") : fmt::format("{}", fmt::join(known, ", "))));
    }
  }
  config::apply_collective_runtime(cluster.instance, software.collectives, o.cluster.instance);
  const int nodes = cluster.instances;
  const hw::DeviceMap devices(cluster);
  const int ranks = o.ranks > 0 ? o.ranks : devices.ranks();
  if (ranks > devices.ranks()) {
    throw InputError(
        fmt::format("--ranks {}: {} x {} has {} ranks", ranks, nodes, o.cluster.instance, devices.ranks()));
  }
  if (op == net::CollectiveOp::SendRecv && ranks != 2) {
    throw InputError("send-recv measures one pair: give --ranks 2");
  }
  net::Collective c{op, std::vector<int>(static_cast<std::size_t>(ranks)), 0, algorithm};
  std::iota(c.ranks.begin(), c.ranks.end(), 0);
  fmt::print("# trnsim collective: {} on {} x {}, {} ranks, dtype {}, algorithm {}, network {}\n", o.op, nodes,
             o.cluster.instance, ranks, o.dtype, o.algorithm, o.network);
  if (!o.overrides.empty()) fmt::print("# with --set {}\n", fmt::join(o.overrides, ", --set "));
  fmt::print("# software {}: collective library {}{}{}\n", software_name, software.collectives.library,
             software.collectives.release.empty() ? "" : ", runtime release " + software.collectives.release,
             software.collectives.optimal ? " (optimal: the analytic optimum)" : "");
  if (cluster.instance.calibration.collective_stream_bandwidth > 0)
    fmt::print("# one collective stream moves at most {:.2f} GB/s (10^9 B/s)\n",
               cluster.instance.calibration.collective_stream_bandwidth / units::kGB);
  fmt::print("# GB/s columns are GiB/s (2^30 bytes per second), as in the Neuron collective benchmark\n");
  fmt::print("#{:>14} {:>14} {:>6} {:>12} {:>12} {:>12}  {}\n", "size(B)", "count(elems)", "type", "time(us)",
             "algbw(GB/s)", "busbw(GB/s)", "algorithm");
  const double gib = units::kGiB;
  double busbw_sum = 0;
  int rows = 0;
  for (double size = min; size <= max; size = next_size(size)) {
    c.bytes = size;
    sim::Engine engine;
    net::Network network(cluster, *model, engine, software.collectives);
    const net::Algorithm used = network.choose(c);
    sim::Time done;
    network.start(c, [&] { done = engine.now(); });
    engine.run();
    const double t = done.to_seconds();
    const double algbw = size / t / gib;
    const double busbw = algbw * net::bus_bandwidth_factor(op, ranks);
    fmt::print(" {:>14.0f} {:>14.0f} {:>6} {:>12.1f} {:>12.2f} {:>12.2f}  {}\n", size, std::floor(size / elem), o.dtype,
               t * 1e6, algbw, busbw, trnsim::to_string(used));
    busbw_sum += busbw;
    ++rows;
  }
  fmt::print("# Avg bus bandwidth    : {:.4f}\n", rows > 0 ? busbw_sum / rows : 0.0);
  return 0;
}
}  // namespace

void add_collective_command(CLI::App& app, Action& action) {
  const auto [sub, opts] = add_subcommand(app, action, "collective",
                                          "Predict the Neuron collective benchmark's table for one operation",
                                          run_collective);
  opts->cluster.add_to(*sub);
  sub->add_option("--ranks", opts->ranks, "Ranks (default: every NeuronCore, logical cores on trn2/trn3; GPUs)");
  sub->add_option("op", opts->op, "all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, send-recv")
      ->required();
  // Sizes as nccl-tests reads -b/-e: whole bytes, every multiple binary (K = KB = KiB = 1024,
  // G = GiB = 2^30), case-insensitive; up to 1 PiB.
  const auto size = [](CLI::Option* option) {
    option->transform(CLI::AsSizeValue(/*kb_is_1000=*/false))->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 50));
  };
  size(sub->add_option("-b,--minbytes", opts->min, "Smallest size in bytes, e.g. 1024, 64KiB, 1GiB (default 1KiB)"));
  size(sub->add_option("-e,--maxbytes", opts->max, "Largest size in bytes (default 1GiB)"));
  sub->add_option("-f,--stepfactor", opts->factor, "Size multiplier between rows (default 2)");
  sub->add_option("--dtype", opts->dtype, "Element type for count(elems): fp32, bf16, fp16, fp8");
  sub->add_option("--algorithm", opts->algorithm,
                  "auto (the software's collective library chooses), optimal (the analytic optimum), ring, "
                  "bidirectional-ring, hierarchical, hierarchical-mesh, torus-2d, halving-doubling, direct");
  sub->add_option("--software", opts->software,
                  "Software preset whose collective library chooses the algorithm (default: the instance "
                  "preset's default software)");
  sub->add_option("--release", opts->release,
                  "Runtime release of the collective library whose fixed costs and stream efficiency to use, "
                  "e.g. 2.9 or 2.19 for neuron-runtime (default: the software preset's)");
  sub->add_option("--network", opts->network, network_model_help());
  sub->add_option("--set", opts->overrides,
                  "Override a figure of the cluster: PATH=VALUE with PATH in the cluster block, as `trnsim run "
                  "--set` sets it, e.g. cluster.intra.bandwidth_GBps=2048, cluster.calibration.KEY=V, cluster.count=2 "
                  "(repeatable)");
}

}  // namespace trnsim::cli
