// trnsim presets: the instance and model presets, with figures derived from their specs.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "command.hpp"
#include "trnsim/config/presets.hpp"
#include "trnsim/enum_names.hpp"
#include "trnsim/units.hpp"

namespace trnsim::cli {

void add_presets_command(CLI::App& app, Action& action) {
  CLI::App* cmd = app.add_subcommand("presets", "List the hardware, model and software presets and the collective libraries");
  cmd->callback([&action] {
    action = [] {
      const config::PresetList list = config::list_presets();
      fmt::print("instances ({}/hardware):\n", config::config_dir());
      // Column units: TFLOPS = 1e12 FLOP/s, GiB = 2^30 bytes, GB/s = 1e9 bytes/s, Gbps = 1e9 bits/s.
      fmt::print("  {:<24} {:>5} {:>6} {:>16} {:>9} {:>17} {:>9}  {}\n", "name", "chips", "ranks",
                 "BF16 TFLOPS/inst", "HBM GiB", "intra GB/s/chip/dir", "EFA Gbps", "default software");
      for (const auto& name : list.instances) {
        const hw::InstanceSpec inst = config::load_instance(name);
        fmt::print("  {:<24} {:>5} {:>6} {:>16.0f} {:>9.0f} {:>19.0f} {:>9.0f}  {}\n", name, inst.chips, inst.ranks(),
                   inst.peak_flops(hw::Dtype::Bf16) / 1e12, inst.chip.hbm_bytes * inst.chips / units::kGiB,
                   inst.intra.bandwidth / 1e9, inst.efa.bandwidth * 8 / 1e9,
                   inst.default_software.empty() ? "-" : inst.default_software);
      }
      fmt::print("\nmodels ({}/models):\n", config::config_dir());
      fmt::print("  {:<16} {:>12} {:>7} {:>7} {:>6} {:>9}\n", "name", "params (B)", "layers", "hidden", "heads",
                 "kv_heads");
      for (const auto& name : list.models) {
        const workload::ModelSpec m = config::load_model(name);
        fmt::print("  {:<16} {:>12.2f} {:>7} {:>7} {:>6} {:>9}{}\n", name, m.parameters() / 1e9, m.layers, m.hidden,
                   m.heads, m.kv_heads,
                   m.is_moe() ? fmt::format("  (MoE {} experts, top-{})", m.experts, m.experts_per_token) : "");
      }
      fmt::print("\nsoftware ({}/software): plan defaults (-: not stated), kernels, overlap, collectives\n",
                 config::config_dir());
      fmt::print("  {:<26} {:>5} {:>4} {:>4} {:>12} {:>12} {:>14} {:>11} {:>15}\n", "name", "micro", "sp", "zero",
                 "recompute", "attention", "dp reduction", "tp overlap", "collectives");
      for (const auto& name : list.software) {
        const workload::SoftwareSpec s = config::load_software(name);
        const auto& d = s.defaults;
        auto text = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string("-"); };
        // tp overlap: the backward's collectives beside the GEMMs that do not need them (Overlap::tp_comm).
        fmt::print("  {:<26} {:>5} {:>4} {:>4} {:>12} {:>12} {:>14} {:>11} {:>15}\n", name, text(d.micro_batch),
                   d.sequence_parallel ? (*d.sequence_parallel ? "on" : "off") : "-", text(d.zero),
                   d.recompute ? workload::recompute_text(*d.recompute) : "-", to_string(s.kernels.attention),
                   to_string(s.overlap.dp_reduction), s.overlap.tp_comm ? "backward" : "none", s.collectives.library);
      }
      fmt::print("\ncollective libraries ({}/collectives): {}\n", config::config_dir(),
                 fmt::join(list.collectives, ", "));
      return 0;
    };
  });
}

}  // namespace trnsim::cli
