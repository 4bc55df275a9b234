// Hardware objects of configs/hardware/*.json (and of a cluster's partial overrides) -> hw specs.
// Keys carry units (configs/hardware/README.md); values are converted to SI here and nowhere else.
#include <limits>

#include <fmt/core.h>

#include "parse.hpp"
#include "trnsim/units.hpp"

namespace trnsim::config::detail {
using namespace trnsim::units;  // unit factors of the configuration keys
namespace {

constexpr double kInf = std::numeric_limits<double>::max();

hw::StreamEngine parse_stream_engine(ObjectReader r) {
  r.documentation();
  hw::StreamEngine e;
  e.elements_per_cycle = r.number("elements_per_cycle", 0, kInf);
  e.clock_hz = r.number("clock_GHz", 0, kInf) * kGHz;
  r.finish();
  return e;
}

hw::CoreSpec parse_core(ObjectReader r) {
  r.documentation();
  hw::CoreSpec c;
  c.name = r.string("name");
  c.pe_rows = static_cast<int>(r.integer_or("pe_rows", 128, 1));
  c.pe_cols = static_cast<int>(r.integer_or("pe_cols", 128, 1));
  // 0: no systolic-array model; matmuls run at the published peak (GPU presets).
  c.tensor_clock_hz = r.number("tensor_clock_GHz", 0, kInf) * kGHz;
  c.fp8_contraction_factor = static_cast<int>(r.integer_or("fp8_contraction_factor", 1, 1));
  c.vector = parse_stream_engine(r.object("vector"));
  c.scalar = parse_stream_engine(r.object("scalar"));
  if (auto g = r.optional_object("gpsimd")) c.gpsimd = parse_stream_engine(*g);  // absent on GPUs
  c.sbuf_bytes = r.number("sbuf_MiB", 0, kInf) * kMiB;
  c.psum_bytes = r.number_or("psum_MiB", 0, 0, kInf) * kMiB;
  r.finish();
  return c;
}

hw::PeakFlops parse_peak(ObjectReader r) {
  r.documentation();
  hw::PeakFlops p;
  // A format the chip does not run is 0 (A100 has no FP8); BF16 and FP32 are always published.
  p.fp32 = r.number("fp32_tflops", 1e-3, kInf) * kTera;
  p.bf16 = r.number("bf16_tflops", 1e-3, kInf) * kTera;
  p.tf32 = r.number_or("tf32_tflops", 0, 0, kInf) * kTera;
  p.fp16 = r.number_or("fp16_tflops", 0, 0, kInf) * kTera;
  p.fp8 = r.number_or("fp8_tflops", 0, 0, kInf) * kTera;
  r.finish();
  return p;
}

hw::ChipSpec parse_chip(ObjectReader r) {
  r.documentation();
  hw::ChipSpec c;
  c.name = r.string("name");
  c.family = r.choice<hw::Family>("family");
  c.physical_cores = static_cast<int>(r.integer("physical_cores", 1, 1024));
  c.logical_core_size = static_cast<int>(r.integer_or("logical_core_size", 1, 1));
  if (c.physical_cores % c.logical_core_size != 0)
    r.fail_at("logical_core_size", fmt::format("{} does not divide physical_cores ({})",
                                               c.logical_core_size, c.physical_cores));
  if (c.family == hw::Family::Gpu && c.physical_cores != 1)
    r.fail_at("physical_cores", fmt::format("a GPU is one core, found {}", c.physical_cores));
  c.core = parse_core(r.object("core"));
  c.peak = parse_peak(r.object("peak"));
  c.hbm_bytes = r.number("hbm_GiB", 1e-3, kInf) * kGiB;
  c.hbm_bandwidth = r.number("hbm_bandwidth_GBps", 1e-3, kInf) * kGB;
  c.dma_bandwidth = r.number_or("dma_bandwidth_GBps", 0, 0, kInf) * kGB;  // 0 = not published
  c.core_link_bandwidth = r.number_or("core_link_GBps", 0, 0, kInf) * kGB;  // 0 = derived
  c.collective_cores = static_cast<int>(r.integer_or("collective_cores", 0, 0));
  c.neuronlink_ports = static_cast<int>(r.integer_or("neuronlink_ports", 0, 0));
  r.finish();
  return c;
}

hw::LinkSpec parse_link(ObjectReader r) {
  r.documentation();
  hw::LinkSpec l;
  l.bandwidth = r.number("bandwidth_GBps", 1e-3, kInf) * kGB;
  l.latency = r.number("latency_us", 0, kInf) * kMicro;
  r.finish();
  return l;
}

hw::Calibration parse_calibration(ObjectReader r) {
  r.documentation();
  hw::Calibration c;
  // Every constant is required: a preset states its calibration and where it came from.
  c.matmul_efficiency = r.number("matmul_efficiency", 1e-3, 1);
  c.vector_efficiency = r.number("vector_efficiency", 1e-3, 1);
  c.hbm_efficiency = r.number("hbm_efficiency", 1e-3, 1);
  c.task_overhead_s = r.number("task_overhead_us", 0, kInf) * kMicro;
  c.collective_startup_s = r.number("collective_startup_us", 0, kInf) * kMicro;
  c.collective_step_s = r.number("collective_step_us", 0, kInf) * kMicro;
  c.comm_compute_slowdown = r.number("comm_compute_slowdown", 1, kInf);
  c.attention_kernel = r.choice<hw::AttentionKernel>("attention_kernel");
  c.source = r.source();
  r.finish();
  return c;
}

}  // namespace

hw::InstanceSpec read_instance_fields(ObjectReader& r) {
  r.documentation();
  hw::InstanceSpec inst;
  inst.source = r.source();
  inst.chips = static_cast<int>(r.integer("chips", 1, 1024));
  inst.chip = parse_chip(r.object("chip"));
  inst.topology = r.choice<hw::IntraTopology>("topology");
  switch (inst.topology) {
    case hw::IntraTopology::Single:
      if (inst.chips != 1) r.fail_at("topology", fmt::format("\"single\" needs chips = 1, found {}", inst.chips));
      break;
    case hw::IntraTopology::Torus2D: {
      inst.torus_x = static_cast<int>(r.integer("torus_x", 1));
      inst.torus_y = static_cast<int>(r.integer("torus_y", 1));
      if (inst.torus_x * inst.torus_y != inst.chips)
        r.fail_at("torus_y", fmt::format("torus {}x{} does not hold chips ({})", inst.torus_x,
                                         inst.torus_y, inst.chips));
      break;
    }
    case hw::IntraTopology::Switched: {
      inst.chips_per_server = static_cast<int>(r.integer("chips_per_server", 1));
      if (inst.chips % inst.chips_per_server != 0)
        r.fail_at("chips_per_server", fmt::format("{} does not divide chips ({})",
                                                  inst.chips_per_server, inst.chips));
      break;
    }
    case hw::IntraTopology::NvSwitch: break;
  }
  // torus_x/torus_y/chips_per_server belong to one topology each; given for another, they are
  // unknown keys (finish() reports them).
  if (inst.chips > 1 || r.present("intra")) inst.intra = parse_link(r.object("intra"));
  inst.ultraserver_instances = static_cast<int>(r.integer_or("ultraserver_instances", 1, 1));
  if (inst.ultraserver_instances > 1 || r.present("ultraserver_link"))
    inst.ultraserver_link = parse_link(r.object("ultraserver_link"));
  if (auto link = r.optional_object("inter_rack_link")) inst.inter_rack_link = parse_link(*link);

  ObjectReader efa = r.object("efa");
  efa.documentation();
  inst.nics = static_cast<int>(efa.integer("nics", 0));  // 0 = no EFA: one instance only
  inst.efa.bandwidth = efa.number("bandwidth_Gbps", 0, kInf) * kGbps;
  inst.efa.latency = efa.number("latency_us", 0, kInf) * kMicro;
  if ((inst.nics == 0) != (inst.efa.bandwidth == 0))
    efa.fail_at("bandwidth_Gbps", fmt::format("nics ({}) and bandwidth must both be 0 (no EFA) or both "
                                              "positive, found {} Gbps", inst.nics, inst.efa.bandwidth / kGbps));
  efa.finish();

  inst.calibration = parse_calibration(r.object("calibration"));
  return inst;
}

hw::InstanceSpec parse_instance_file(const json& document, const std::string& file) {
  ObjectReader r(document, file, "");
  const std::string name = r.string("name");
  hw::InstanceSpec inst = read_instance_fields(r);
  inst.name = name;
  r.finish();
  return inst;
}

hw::FabricSpec parse_fabric(ObjectReader r) {
  r.documentation();
  hw::FabricSpec f;
  f.oversubscription = r.number_or("oversubscription", 1.0, 1.0, kInf);
  f.switch_latency = r.number_or("switch_latency_us", 0, 0, kInf) * kMicro;
  f.leaf_radix = static_cast<int>(r.integer_or("leaf_radix", 64, 2));
  r.finish();
  return f;
}

}  // namespace trnsim::config::detail
