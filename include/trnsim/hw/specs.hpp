#pragma once
// Hardware specifications as plain structs, in SI units (bytes, bytes/s, seconds, FLOP/s, Hz).
// Filled by the config layer from configs/hardware/*.json (whose keys carry their units); every
// other layer reads them. No behaviour here beyond derived figures. Each enum's spellings
// (trnsim/enum_names.hpp) follow it; each struct's configuration keys, units and ranges are one
// table in the config layer (src/config/hardware_fields.cpp).
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "trnsim/enum_names.hpp"

namespace trnsim::hw {

enum class Family : std::uint8_t { Trainium, Gpu };
constexpr auto enum_table(Family) {
  return std::array{EnumName{Family::Trainium, "trainium"}, EnumName{Family::Gpu, "gpu"}};
}

// Numeric formats the tensor engine (or tensor cores) can run.
enum class Dtype : std::uint8_t { Fp32, Tf32, Bf16, Fp16, Fp8 };
constexpr auto enum_table(Dtype) {
  return std::array{EnumName{Dtype::Fp32, "fp32"}, EnumName{Dtype::Tf32, "tf32"}, EnumName{Dtype::Bf16, "bf16"},
                    EnumName{Dtype::Fp16, "fp16"}, EnumName{Dtype::Fp8, "fp8"}};
}

// Peak dense FLOP/s of one *chip* per format (GPU: one GPU).
// Configuration keys: kPeakFields in src/config/hardware_fields.cpp.
struct PeakFlops {
  double fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0;
  double of(Dtype d) const;
};

// One engine of a NeuronCore that streams elements (vector, scalar, gpsimd); GPU: CUDA cores.
// Configuration keys: kStreamEngineFields in src/config/hardware_fields.cpp.
struct StreamEngine {
  double elements_per_cycle = 0;
  double clock_hz = 0;
  double elements_per_second() const { return elements_per_cycle * clock_hz; }
};

// One physical NeuronCore (GPU: one GPU's SMs taken together).
// Configuration keys: kCoreFields in src/config/hardware_fields.cpp.
struct CoreSpec {
  std::string name;            // "NeuronCore-v2", "A100 SMs"
  int pe_rows = 128;           // tensor engine systolic array (contraction dimension)
  int pe_cols = 128;           // tensor engine output columns
  // Derived, not configured (config, hardware_fields.cpp): on Trainium the chip's published BF16
  // peak / (2 x pe_rows x pe_cols x physical_cores), so that the peak MFU is quoted against and
  // the rate the cost model tiles at are one figure; 0 = no systolic-array model (GPUs).
  double tensor_clock_hz = 0;
  int fp8_contraction_factor = 1;  // FP8 doubles the contraction on NeuronCore-v3
  StreamEngine vector;
  StreamEngine scalar;
  StreamEngine gpsimd;
  double sbuf_bytes = 0;
  double psum_bytes = 0;
  // NeuronCore matmul instructions (NKI ISA, nc_matmul): a 128 x 128 stationary tile and up to
  // `moving_max` columns of the moving operand (one 2 KiB PSUM bank of fp32 per partition); an
  // instruction takes max(columns, min_instruction_cycles) cycles ("MIN_II", about 64).
  int moving_max = 512;
  int min_instruction_cycles = 64;
  // GPUs: streaming multiprocessors and the output tile of the vendor GEMM library's kernels for
  // large products (m x n per thread block, k per main-loop step): tile and wave quantisation.
  int sms = 0;
  int gemm_tile_m = 0, gemm_tile_n = 0, gemm_tile_k = 0;
};

// How the training stack computes the attention core: flash-style (scores stay on chip) or
// materialized (the s x s scores and probabilities go through HBM between kernels).
enum class AttentionKernel : std::uint8_t { Flash, Materialized };
constexpr auto enum_table(AttentionKernel) {
  return std::array{EnumName{AttentionKernel::Flash, "flash"}, EnumName{AttentionKernel::Materialized, "materialized"}};
}

// Calibration constants: sustained fractions of peak and fixed costs. They live in the hardware
// file with their provenance and apply to every run on that hardware alike.
// Configuration keys: kCalibrationFields in src/config/hardware_fields.cpp.
struct Calibration {
  // Sustained fraction of the tensor peak while a matmul streams: GPUs, inside a GEMM tile's main
  // loop; NeuronCore, the fraction of cycles the compiler's schedule keeps the array streaming
  // beyond the ISA's price of each instruction (cost/compute_model.hpp).
  double matmul_efficiency = 1.0;
  // NeuronCore: cycles added to every matmul instruction beyond the ISA's (a what-if knob; 0 in
  // the presets, whose losses beyond the ISA are matmul_efficiency).
  double tensor_instruction_overhead_cycles = 0;
  double vector_efficiency = 1.0;   // sustained fraction of vector/scalar element rates
  double hbm_efficiency = 1.0;      // sustained fraction of HBM bandwidth
  double task_overhead_s = 0;       // fixed cost per compute task (launch, sync)
  // Collectives (net/closed_form.hpp has the cost of a schedule built from these). The four
  // figures below are what the network layer reads. The config layer resolves them
  // (config::apply_collective_runtime): a figure the hardware file or --set states (`stated`)
  // is taken as it is; an unstated one comes from the runtime release the software runs
  // (configs/collectives: a release's launch, step and message costs; the stream rate is the
  // chip's DMA data path, ChipSpec::collective_stream_dma, times the release's stream
  // efficiency). Tests and tools that build a cluster by hand set them directly.
  // The runtime's launch of one collective operation, paid once per call;
  double collective_launch_s = 0;
  // the synchronisation of one algorithm step with its peers: the shortest a step can take, its
  // data moving meanwhile (a step lasts max(this, its data time));
  double collective_step_s = 0;
  // per message a rank posts in a step (one per peer it sends to: 1 on a ring, n-1 on a mesh),
  // paid before the step's data flows;
  double collective_message_s = 0;
  // the fraction of the chip's DMA throughput (ChipSpec::dma_bandwidth) that collective traffic
  // sustains: the chip's DMA link carries every core-to-core and device-link send at that rate.
  double collective_dma_share = 1.0;
  // the rate of one DMA stream: what a rank sends to one peer in one step moves at most this fast
  // (bytes/s; 0 = no limit beyond the links). A rank sending to two peers at once (a ring in both
  // directions) runs two streams.
  double collective_stream_bandwidth = 0;
  // That cap as a rate: +infinity when there is none.
  double stream_rate() const {
    return collective_stream_bandwidth > 0 ? collective_stream_bandwidth : std::numeric_limits<double>::infinity();
  }
  // GPUs run collectives on SMs: compute is slowed by this factor while a collective runs
  // (1.0 = no slowdown, Trainium's dedicated collective cores).
  double comm_compute_slowdown = 1.0;
  // The collective figures as the hardware file or --set gives them (seconds, bytes/s); unset:
  // the runtime release's (see above).
  struct StatedCollectiveFigures {
    std::optional<double> launch_s, step_s, message_s, stream_bandwidth;
  };
  StatedCollectiveFigures stated;
  std::string source;
};

// Configuration keys: kChipFields in src/config/hardware_fields.cpp.
struct ChipSpec {
  std::string name;                 // "Trainium", "Trainium2", "A100-SXM4-80GB"
  Family family = Family::Trainium;
  int physical_cores = 1;           // NeuronCores per chip (GPU: 1)
  int logical_core_size = 1;        // LNC: physical cores fused into one logical core (trn2/trn3: 2)
  CoreSpec core;
  PeakFlops peak;                   // per chip
  double hbm_bytes = 0;
  double hbm_bandwidth = 0;         // bytes/s
  // Bytes/s the chip's DMA engines move in total (0 = not known). On Trainium they move every
  // byte a core sends to another core or over a device link; collectives get
  // Calibration::collective_dma_share of it (net/topology.hpp, the chip's DMA link).
  double dma_bandwidth = 0;
  // The DMA engines one at a time (NKI DMA bandwidth guide: what one engine streams): a
  // collective stream is one collective-communication core's program driving its share of the
  // chip's engines, dma_engines / collective_cores of them.
  int dma_engines = 0;
  double dma_engine_bandwidth = 0;  // bytes/s per engine
  int collective_cores = 0;
  int neuronlink_ports = 0;
  int logical_cores() const { return physical_cores / logical_core_size; }
  // Bytes/s one collective stream's DMA engines move at full rate (0: the chip does not publish
  // its engines). The runtime release's stream efficiency scales it (hw::Calibration).
  double collective_stream_dma() const {
    return dma_engines > 0 && collective_cores > 0 && dma_engine_bandwidth > 0
               ? dma_engine_bandwidth * dma_engines / collective_cores
               : 0;
  }
};

// How the chips of one instance (or server) are wired.
enum class IntraTopology : std::uint8_t {
  Single,       // one chip (trn1.2xlarge)
  Torus2D,      // trn1/trn2: 4x4 2D torus of NeuronLink
  NvSwitch,     // GPUs behind NVSwitch
  Switched,     // trn3: NeuronSwitch fabric
};
constexpr auto enum_table(IntraTopology) {
  return std::array{EnumName{IntraTopology::Single, "single"}, EnumName{IntraTopology::Torus2D, "torus2d"},
                    EnumName{IntraTopology::NvSwitch, "nvswitch"}, EnumName{IntraTopology::Switched, "switched"}};
}

// Configuration keys: kLinkFields in src/config/hardware_fields.cpp.
struct LinkSpec {
  double bandwidth = 0;  // bytes/s, one direction
  double latency = 0;    // seconds per hop
};

// Configuration keys: kInstanceFields (with kEfaFields for "efa") in src/config/hardware_fields.cpp.
struct InstanceSpec {
  std::string name;                  // preset name, "trn1.32xlarge"
  int chips = 1;                     // chips (GPUs) per instance
  ChipSpec chip;
  IntraTopology topology = IntraTopology::Single;
  int torus_x = 1, torus_y = 1;      // Torus2D dimensions (x * y == chips)
  // Per-chip device-to-device bandwidth inside the instance (all of a chip's links together,
  // one direction) and the per-hop latency: NeuronLink on Trainium, NVLink on GPUs.
  LinkSpec intra;
  // UltraServer grouping: instances per UltraServer (1 = none) and the per-chip bandwidth of the
  // links between instances of one UltraServer (trn2u Z ring; trn3 inter-server switch).
  int ultraserver_instances = 1;
  LinkSpec ultraserver_link;
  // trn3 only: chips per server behind the intra-server switch, and the direct per-chip links
  // between racks (to the chip at the same position).
  int chips_per_server = 0;
  LinkSpec inter_rack_link;
  // Network between instances (EFA / InfiniBand): NICs per instance and total bandwidth.
  int nics = 0;
  LinkSpec efa;                      // bandwidth: whole instance, one direction
  Calibration calibration;
  // The software preset (configs/software) an experiment on this instance runs when it names none.
  std::string default_software;
  std::string source;
  double peak_flops(Dtype d) const { return chip.peak.of(d) * chips; }
  // A chip's links inside the instance, each carrying intra.bandwidth / intra_ports() one way: on
  // a torus two ports per dimension longer than 1 (4 on a 4x4), behind a switch one link to it,
  // a single chip none.
  int intra_ports() const {
    switch (topology) {
      case IntraTopology::Torus2D: return (torus_x > 1 ? 2 : 0) + (torus_y > 1 ? 2 : 0);
      case IntraTopology::NvSwitch:
      case IntraTopology::Switched: return 1;
      case IntraTopology::Single: break;
    }
    return 0;
  }
  double intra_link_bandwidth() const { return intra_ports() > 0 ? intra.bandwidth / intra_ports() : 0; }
  // Ranks (GPUs, or logical NeuronCores) per instance: trn1 32, trn2 with LNC=2 64, DGX 8.
  int ranks() const { return chips * chip.logical_cores(); }
};

// The fabric between instances: a rail-optimised two-level Clos (leaf per rail, spine).
// Configuration keys: kFabricFields in src/config/hardware_fields.cpp.
struct FabricSpec {
  double oversubscription = 1.0;   // leaf uplink : downlink bandwidth ratio 1:x (x >= 1)
  double switch_latency = 0;       // seconds per switch traversal
  int leaf_radix = 64;             // downlinks per leaf switch
  int spines = 8;                  // spine switches: the ECMP width between any two leaves
};

// Configuration keys: parse_cluster in src/config/load_experiment.cpp (instance keys, count or devices, fabric).
struct ClusterSpec {
  InstanceSpec instance;
  int instances = 1;
  FabricSpec fabric;
  int chips() const { return instance.chips * instances; }
  std::int64_t ranks() const { return std::int64_t{instance.ranks()} * instances; }
};

}  // namespace trnsim::hw
