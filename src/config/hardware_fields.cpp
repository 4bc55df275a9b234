// The field tables of the hw specs (include/trnsim/hw/specs.hpp): configs/hardware/*.json, a
// cluster's partial overrides of its preset, and cluster.fabric. Keys carry units
// (configs/README.md); values are converted to SI here and nowhere else. Per-figure provenance
// lives in the preset files ("sources"), not here: a row says what the field is.
#include <fmt/core.h>

#include "field_table.hpp"
#include "parse.hpp"
#include "trnsim/units.hpp"

namespace trnsim::config::detail {
using namespace trnsim::units;  // unit factors of the configuration keys
namespace {

// Physical ranges, in the keys' units: generous enough for any chip to come, tight enough that
// a typo (a latency of 1e30 us, a peak of 1e308 TFLOPS, a bandwidth of 1e-300 GB/s) is an input
// error naming its path rather than an overflow of simulated time (int64 picoseconds).
constexpr Range kBandwidthGBps{1e-3, 1e7};  // 1 MB/s .. 10 PB/s (per chip, link or HBM)
constexpr Range kEfaGbps{1e-3, 1e8, "no EFA"};  // per instance
constexpr Range kLatencyUs{0, 1e6};         // up to 1 s per hop, task or collective
constexpr Range kTflops{1e-3, 1e6};         // 1 GFLOPS .. 1 EFLOPS per chip
constexpr Range kTflopsOrNone{1e-3, 1e6, "the format is not supported"};
constexpr Range kClockGHz{1e-3, 100, "the engine is absent"};  // 1 MHz .. 100 GHz
constexpr Range kElementsPerCycle{1e-3, 1e9, "the engine is absent"};
constexpr Range kMemoryGiB{1e-3, 1e6};      // 1 MiB .. ~1 PiB per chip
constexpr Range kOnChipMiB{1e-3, 1e6, "none"};  // 1 KiB .. ~1 TiB per core
constexpr Range kEfficiency{1e-3, 1};       // a sustained fraction of a peak
constexpr Range kSlowdown{1, 1e3};
constexpr Range kUnits{1, 1024};            // chips per instance, cores per chip, instances per UltraServer
constexpr Range kUnitsOrNone{0, 1024};
constexpr Range kPeArray{1, 65536};

using hw::Calibration;
using hw::ChipSpec;
using hw::CoreSpec;
using hw::FabricSpec;
using hw::InstanceSpec;
using hw::LinkSpec;
using hw::PeakFlops;
using hw::StreamEngine;

bool has_bandwidth(const LinkSpec& l) { return l.bandwidth > 0; }
bool is_torus(const InstanceSpec& i) { return i.topology == hw::IntraTopology::Torus2D; }

constexpr Field<StreamEngine> kStreamEngineFields[] = {
    documentation<StreamEngine>(),
    number<&StreamEngine::elements_per_cycle>("elements_per_cycle", 1, kElementsPerCycle, "elements per cycle"),
    number<&StreamEngine::clock_hz>("clock_GHz", kGHz, kClockGHz, "engine clock"),
};

constexpr Field<CoreSpec> kCoreFields[] = {
    documentation<CoreSpec>(),
    value<&CoreSpec::name>("name", "\"NeuronCore-v2\"; GPUs: the SMs taken together"),
    integer<&CoreSpec::pe_rows>("pe_rows", kPeArray, "tensor engine systolic array rows (contraction)").or_default(128),
    integer<&CoreSpec::pe_cols>("pe_cols", kPeArray, "tensor engine output columns").or_default(128),
    derived<&CoreSpec::tensor_clock_hz>("tensor_clock_GHz", kGHz, "../peak/bf16_tflops",
                                        "Trainium: bf16_tflops / (2 x pe_rows x pe_cols x physical_cores)"),
    integer<&CoreSpec::fp8_contraction_factor>("fp8_contraction_factor", {1, 64},
                                               "FP8 widens the contraction (NeuronCore-v3: 2)").or_default(1),
    object<&CoreSpec::vector, kStreamEngineFields>("vector", "vector engine (GPUs: CUDA cores)")
        .then([](ObjectReader& r, CoreSpec& c) {
          // Every model has element-wise work (embedding, norms) and the scalar engine's falls
          // back to the vector engine (cost/compute_model.cpp): a core without one cannot run.
          const char* zero = c.vector.clock_hz <= 0                 ? "clock_GHz"
                             : c.vector.elements_per_cycle <= 0 ? "elements_per_cycle"
                                                                : nullptr;
          if (zero != nullptr)
            fail(r.file(), child_path(r.path_of("vector"), zero),
                 "expected a value above 0 (every core needs its vector engine), found 0");
        }),
    object<&CoreSpec::scalar, kStreamEngineFields>("scalar", "scalar engine (GPUs: special-function units)"),
    object<&CoreSpec::gpsimd, kStreamEngineFields>("gpsimd", "GpSimd engine; absent on GPUs")
        .optional([](const CoreSpec& c) { return c.gpsimd.elements_per_cycle > 0; }),
    number<&CoreSpec::sbuf_bytes>("sbuf_MiB", kMiB, kOnChipMiB, "state buffer (GPUs: shared memory)"),
    number<&CoreSpec::psum_bytes>("psum_MiB", kMiB, kOnChipMiB, "partial-sum buffer").or_default(0),
    integer<&CoreSpec::moving_max>("moving_max", {1, 65536}, "NeuronCore: moving columns per matmul instruction")
        .or_default(512),
    integer<&CoreSpec::min_instruction_cycles>("min_instruction_cycles", {0, 65536},
                                               "NeuronCore: cycles a matmul instruction takes at least (MIN_II)")
        .or_default(64),
    integer<&CoreSpec::sms>("sms", {0, 65536}, "GPU: streaming multiprocessors (0 on Trainium)").or_default(0),
    integer<&CoreSpec::gemm_tile_m>("gemm_tile_m", {0, 65536}, "GPU: GEMM thread-block tile rows").or_default(0),
    integer<&CoreSpec::gemm_tile_n>("gemm_tile_n", {0, 65536}, "GPU: GEMM thread-block tile columns").or_default(0),
    integer<&CoreSpec::gemm_tile_k>("gemm_tile_k", {0, 65536}, "GPU: GEMM main-loop step depth").or_default(0),
};

constexpr Field<PeakFlops> kPeakFields[] = {
    documentation<PeakFlops>(),
    number<&PeakFlops::fp32>("fp32_tflops", kTera, kTflops, "dense FP32 peak per chip"),
    number<&PeakFlops::bf16>("bf16_tflops", kTera, kTflops, "dense BF16 peak per chip: what MFU is quoted against"),
    number<&PeakFlops::tf32>("tf32_tflops", kTera, kTflopsOrNone, "dense TF32 peak per chip").or_default(0),
    number<&PeakFlops::fp16>("fp16_tflops", kTera, kTflopsOrNone, "dense FP16 peak per chip").or_default(0),
    number<&PeakFlops::fp8>("fp8_tflops", kTera, kTflopsOrNone, "dense FP8 peak per chip").or_default(0),
};

constexpr Field<ChipSpec> kChipFields[] = {
    documentation<ChipSpec>(),
    value<&ChipSpec::name>("name", "\"Trainium\", \"Trainium2\", \"A100-SXM4-80GB\""),
    value<&ChipSpec::family>("family", "trainium or gpu"),
    integer<&ChipSpec::physical_cores>("physical_cores", kUnits, "NeuronCores per chip (GPU: 1)"),
    integer<&ChipSpec::logical_core_size>("logical_core_size", kUnits, "LNC: physical cores per rank")
        .or_default(1)
        .then([](ObjectReader& r, ChipSpec& c) {
          if (c.physical_cores % c.logical_core_size != 0)
            r.fail_at("logical_core_size", fmt::format("{} does not divide physical_cores ({})", c.logical_core_size,
                                                       c.physical_cores));
          if (c.family == hw::Family::Gpu && c.physical_cores != 1)
            r.fail_at("physical_cores", fmt::format("a GPU is one core, found {}", c.physical_cores));
        }),
    object<&ChipSpec::core, kCoreFields>("core", "one physical core"),
    object<&ChipSpec::peak, kPeakFields>("peak", "published dense peaks per chip"),
    rule<ChipSpec>([](ObjectReader& r, ChipSpec& c) {
      // The published chip peak is the one declaration of the tensor engine's speed (MFU is quoted
      // against it); the PE-array clock the cost model's tiling needs follows from it, so that a
      // change of the peak changes the step time. GPUs have no PE-array model (clock 0: matmuls
      // run at the published peak).
      const hw::CoreSpec& k = c.core;
      c.core.tensor_clock_hz =
          c.family == hw::Family::Trainium ? c.peak.bf16 / (2.0 * k.pe_rows * k.pe_cols * c.physical_cores) : 0;
      check_derived<CoreSpec>(r.object("core"), c.core, kCoreFields);
    }),
    number<&ChipSpec::hbm_bytes>("hbm_GiB", kGiB, kMemoryGiB, "HBM capacity per chip"),
    number<&ChipSpec::hbm_bandwidth>("hbm_bandwidth_GBps", kGB, kBandwidthGBps, "HBM bandwidth per chip"),
    number<&ChipSpec::dma_bandwidth>("dma_bandwidth_GBps", kGB,
                                     {1e-3, 1e7, "not known: core-to-core copies at half the HBM bandwidth"},
                                     "bytes the chip's DMA engines move per second, all engines together")
        .or_default(0),
    integer<&ChipSpec::dma_engines>("dma_engines", {0, 65536}, "DMA engines per chip (0: not published)").or_default(0),
    number<&ChipSpec::dma_engine_bandwidth>("dma_engine_GBps", kGB, {1e-3, 1e7, "not published"},
                                            "what one DMA engine streams")
        .or_default(0),
    integer<&ChipSpec::collective_cores>("collective_cores", kUnitsOrNone, "collective-communication cores")
        .or_default(0),
    integer<&ChipSpec::neuronlink_ports>("neuronlink_ports", kUnitsOrNone, "NeuronLink ports (0: not published)")
        .or_default(0),
};

constexpr Field<LinkSpec> kLinkFields[] = {
    documentation<LinkSpec>(),
    number<&LinkSpec::bandwidth>("bandwidth_GBps", kGB, kBandwidthGBps, "per chip, one direction"),
    number<&LinkSpec::latency>("latency_us", kMicro, kLatencyUs, "per hop"),
};

// "efa" is an object of the instance file whose keys are InstanceSpec fields.
constexpr Field<InstanceSpec> kEfaFields[] = {
    documentation<InstanceSpec>(),
    integer<&InstanceSpec::nics>("nics", kUnitsOrNone, "EFA NICs per instance (0: no EFA, one instance only)"),
    number<&InstanceSpec::efa, &LinkSpec::bandwidth>("bandwidth_Gbps", kGbps, kEfaGbps, "whole instance, one direction")
        .then([](ObjectReader& r, InstanceSpec& i) {
          if ((i.nics == 0) != (i.efa.bandwidth == 0))
            r.fail_at("bandwidth_Gbps", fmt::format("nics ({}) and bandwidth must both be 0 (no EFA) or both "
                                                    "positive, found {} Gbps",
                                                    i.nics, i.efa.bandwidth / kGbps));
        }),
    number<&InstanceSpec::efa, &LinkSpec::latency>("latency_us", kMicro, kLatencyUs, "point to point"),
};

constexpr Field<Calibration> kCalibrationFields[] = {
    documentation<Calibration>(),
    source<&Calibration::source>(),
    number<&Calibration::matmul_efficiency>("matmul_efficiency", 1, kEfficiency,
                                            "of the tensor-engine peak while a matmul streams"),
    number<&Calibration::tensor_instruction_overhead_cycles>("tensor_instruction_overhead_cycles", 1, {0, 1e6},
                                                             "NeuronCore: cycles per matmul instruction beyond its "
                                                             "moving columns")
        .or_default(0),
    number<&Calibration::vector_efficiency>("vector_efficiency", 1, kEfficiency, "of the vector and scalar rates"),
    number<&Calibration::hbm_efficiency>("hbm_efficiency", 1, kEfficiency, "of the HBM bandwidth"),
    number<&Calibration::task_overhead_s>("task_overhead_us", kMicro, kLatencyUs, "fixed cost per compute task"),
    // The collective runtime's figures: stated here (GPU presets, or a what-if through --set),
    // else null and taken from the runtime release the software names (configs/collectives).
    number<&Calibration::stated, &Calibration::StatedCollectiveFigures::launch_s>(
        "collective_launch_us", kMicro, kLatencyUs, "launch of one collective operation (null: the runtime release's)"),
    number<&Calibration::stated, &Calibration::StatedCollectiveFigures::step_s>(
        "collective_step_us", kMicro, kLatencyUs,
        "synchronisation of an algorithm step: its shortest duration (null: the runtime release's)"),
    number<&Calibration::stated, &Calibration::StatedCollectiveFigures::message_s>(
        "collective_message_us", kMicro, kLatencyUs,
        "per message a rank posts in a step, per peer (null: the runtime release's)"),
    number<&Calibration::collective_dma_share>("collective_dma_share", 1, kEfficiency,
                                               "of the chip's DMA throughput that collectives sustain")
        .or_default(1.0),
    number<&Calibration::stated, &Calibration::StatedCollectiveFigures::stream_bandwidth>(
        "collective_stream_GBps", kGB, {0, 1e7, "no limit beyond the links"},
        "one DMA stream, a rank's sends to one peer in a step (null: the chip's DMA engines per collective core "
        "x engine rate x the runtime release's stream efficiency; no release: no limit)"),
    number<&Calibration::comm_compute_slowdown>("comm_compute_slowdown", 1, kSlowdown,
                                                "compute slowdown while a collective runs (GPUs; 1: none)"),
    // The collective figures the runtime release supplied (apply_collective_runtime), written under
    // "derived" for the reader and for `sensitivity`; output only: read back, it is ignored (they
    // follow the release and the chip again), and drop_derived removes it before a --set is parsed.
    {.read = [](const Field<Calibration>&, ObjectReader& r, Calibration&) { (void)r.raw("derived"); },
     .write = [](const Field<Calibration>&, const Calibration& c, json& out) {
       json d = json::object();
       if (!c.stated.launch_s) d["collective_launch_us"] = c.collective_launch_s / kMicro;
       if (!c.stated.step_s) d["collective_step_us"] = c.collective_step_s / kMicro;
       if (!c.stated.message_s) d["collective_message_us"] = c.collective_message_s / kMicro;
       if (!c.stated.stream_bandwidth && c.collective_stream_bandwidth > 0)
         d["collective_stream_GBps"] = c.collective_stream_bandwidth / kGB;
       if (!d.empty()) out["derived"] = std::move(d);
     }},
};

constexpr Field<InstanceSpec> kInstanceFields[] = {
    documentation<InstanceSpec>(),
    source<&InstanceSpec::source>(),
    integer<&InstanceSpec::chips>("chips", kUnits, "chips (GPUs) per instance"),
    object<&InstanceSpec::chip, kChipFields>("chip", "one chip"),
    value<&InstanceSpec::topology>("topology", "single, torus2d, nvswitch or switched")
        .then([](ObjectReader& r, InstanceSpec& i) {
          if (i.topology == hw::IntraTopology::Single && i.chips != 1)
            r.fail_at("topology", fmt::format("\"single\" needs chips = 1, found {}", i.chips));
        }),
    // torus_x/torus_y/chips_per_server belong to one topology each; given for another, they are
    // unknown keys.
    integer<&InstanceSpec::torus_x>("torus_x", kUnits, "torus columns").only_if(is_torus),
    integer<&InstanceSpec::torus_y>("torus_y", kUnits, "torus rows")
        .only_if(is_torus)
        .then([](ObjectReader& r, InstanceSpec& i) {
          if (i.torus_x * i.torus_y != i.chips)
            r.fail_at("torus_y", fmt::format("torus {}x{} does not hold chips ({})", i.torus_x, i.torus_y, i.chips));
        }),
    integer<&InstanceSpec::chips_per_server>("chips_per_server", kUnits, "chips behind one server's switch")
        .only_if([](const InstanceSpec& i) { return i.topology == hw::IntraTopology::Switched; })
        .then([](ObjectReader& r, InstanceSpec& i) {
          if (i.chips % i.chips_per_server != 0)
            r.fail_at("chips_per_server",
                      fmt::format("{} does not divide chips ({})", i.chips_per_server, i.chips));
        }),
    object<&InstanceSpec::intra, kLinkFields>("intra", "chip-to-chip link inside the instance")
        .optional([](const InstanceSpec& i) { return has_bandwidth(i.intra); })
        .required_if([](const InstanceSpec& i) { return i.chips > 1; }),
    integer<&InstanceSpec::ultraserver_instances>("ultraserver_instances", kUnits, "instances per UltraServer")
        .or_default(1),
    object<&InstanceSpec::ultraserver_link, kLinkFields>("ultraserver_link", "per-chip link between its instances")
        .optional([](const InstanceSpec& i) { return has_bandwidth(i.ultraserver_link); })
        .required_if([](const InstanceSpec& i) { return i.ultraserver_instances > 1; }),
    object<&InstanceSpec::inter_rack_link, kLinkFields>("inter_rack_link", "trn3: direct per-chip links between racks")
        .optional([](const InstanceSpec& i) { return has_bandwidth(i.inter_rack_link); }),
    group<InstanceSpec, kEfaFields>("efa", "the network between instances"),
    value<&InstanceSpec::default_software>("software", "the software preset an experiment runs when it names none"),
    object<&InstanceSpec::calibration, kCalibrationFields>("calibration", "sustained fractions and fixed costs"),
};

constexpr Field<FabricSpec> kFabricFields[] = {
    documentation<FabricSpec>(),
    number<&FabricSpec::oversubscription>("oversubscription", 1, {1, 1e3}, "leaf uplink : downlink 1:x")
        .or_default(1),
    number<&FabricSpec::switch_latency>("switch_latency_us", kMicro, kLatencyUs, "per switch traversal")
        .or_default(0),
    integer<&FabricSpec::leaf_radix>("leaf_radix", {2, 65536}, "downlinks per leaf switch").or_default(64),
    integer<&FabricSpec::spines>("spines", {1, 65536}, "spine switches: the ECMP width between two leaves")
        .or_default(8),
};

}  // namespace

hw::InstanceSpec read_instance_fields(ObjectReader& r) {
  hw::InstanceSpec inst;
  read_fields<InstanceSpec>(r, inst, kInstanceFields);
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

hw::FabricSpec parse_fabric(ObjectReader r) { return read_struct<FabricSpec>(std::move(r), kFabricFields); }

json to_json(const hw::InstanceSpec& instance) { return write_fields<InstanceSpec>(instance, kInstanceFields); }

json to_json(const hw::FabricSpec& fabric) { return write_fields<FabricSpec>(fabric, kFabricFields); }

}  // namespace trnsim::config::detail
