// hw specs -> JSON with units in the keys: the inverse of hardware_parse.cpp, used to fill the
// defaults of the resolved experiment.
#include "parse.hpp"
#include "trnsim/units.hpp"

namespace trnsim::config::detail {
using namespace trnsim::units;  // unit factors of the configuration keys
namespace {

json engine_json(const hw::StreamEngine& e) {
  return json{{"elements_per_cycle", e.elements_per_cycle}, {"clock_GHz", e.clock_hz / kGHz}};
}

json link_json(const hw::LinkSpec& l) {
  return json{{"bandwidth_GBps", l.bandwidth / kGB}, {"latency_us", l.latency / kMicro}};
}

json chip_json(const hw::ChipSpec& c) {
  const hw::CoreSpec& k = c.core;
  json core{{"name", k.name},
            {"pe_rows", k.pe_rows},
            {"pe_cols", k.pe_cols},
            {"tensor_clock_GHz", k.tensor_clock_hz / kGHz},
            {"fp8_contraction_factor", k.fp8_contraction_factor},
            {"vector", engine_json(k.vector)},
            {"scalar", engine_json(k.scalar)},
            {"sbuf_MiB", k.sbuf_bytes / kMiB},
            {"psum_MiB", k.psum_bytes / kMiB}};
  if (k.gpsimd.elements_per_cycle > 0) core["gpsimd"] = engine_json(k.gpsimd);
  return json{{"name", c.name},
              {"family", trnsim::to_string(c.family)},
              {"physical_cores", c.physical_cores},
              {"logical_core_size", c.logical_core_size},
              {"core", core},
              {"peak",
               {{"fp32_tflops", c.peak.fp32 / kTera},
                {"tf32_tflops", c.peak.tf32 / kTera},
                {"bf16_tflops", c.peak.bf16 / kTera},
                {"fp16_tflops", c.peak.fp16 / kTera},
                {"fp8_tflops", c.peak.fp8 / kTera}}},
              {"hbm_GiB", c.hbm_bytes / kGiB},
              {"hbm_bandwidth_GBps", c.hbm_bandwidth / kGB},
              {"dma_bandwidth_GBps", c.dma_bandwidth / kGB},
              {"core_link_GBps", c.core_link_bandwidth / kGB},
              {"collective_cores", c.collective_cores},
              {"neuronlink_ports", c.neuronlink_ports}};
}

}  // namespace

json to_json(const hw::InstanceSpec& i) {
  json j{{"chips", i.chips},
         {"chip", chip_json(i.chip)},
         {"topology", trnsim::to_string(i.topology)},
         {"ultraserver_instances", i.ultraserver_instances},
         {"efa",
          {{"nics", i.nics},
           {"bandwidth_Gbps", i.efa.bandwidth / kGbps},
           {"latency_us", i.efa.latency / kMicro}}}};
  if (i.topology == hw::IntraTopology::Torus2D) {
    j["torus_x"] = i.torus_x;
    j["torus_y"] = i.torus_y;
  }
  if (i.topology == hw::IntraTopology::Switched) j["chips_per_server"] = i.chips_per_server;
  if (i.intra.bandwidth > 0) j["intra"] = link_json(i.intra);
  if (i.ultraserver_link.bandwidth > 0) j["ultraserver_link"] = link_json(i.ultraserver_link);
  if (i.inter_rack_link.bandwidth > 0) j["inter_rack_link"] = link_json(i.inter_rack_link);
  const hw::Calibration& c = i.calibration;
  j["calibration"] = json{{"matmul_efficiency", c.matmul_efficiency},
                          {"vector_efficiency", c.vector_efficiency},
                          {"hbm_efficiency", c.hbm_efficiency},
                          {"task_overhead_us", c.task_overhead_s / kMicro},
                          {"collective_startup_us", c.collective_startup_s / kMicro},
                          {"collective_step_us", c.collective_step_s / kMicro},
                          {"comm_compute_slowdown", c.comm_compute_slowdown},
                          {"attention_kernel", trnsim::to_string(c.attention_kernel)}};
  return j;
}

json to_json(const hw::FabricSpec& f) {
  return json{{"oversubscription", f.oversubscription},
              {"switch_latency_us", f.switch_latency / kMicro},
              {"leaf_radix", f.leaf_radix}};
}

}  // namespace trnsim::config::detail
