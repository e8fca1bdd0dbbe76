// What the planner knows about a GPU type: measured GEMM and attention times per shape, device
// memory bandwidth, collective times per message size and group layout, optional per-layer
// times (Sailor-style), and the few constants fitted on measured steps. Interpolation lives here
// (one home): GEMM and attention by inverse-distance weighting in log-shape space, collectives
// piecewise-linearly in log(size)–log(time).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace orrery::plan {

enum class GemmOp { kFwd, kWgrad, kDgrad };
enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv, kBroadcast };
enum class DType { kFp32, kBf16 };

// Y[M,N] = X[M,K]·W[N,K]ᵀ (nn.Linear layout); wgrad/dgrad rows use the shapes they were run with.
struct GemmPoint {
  GemmOp op = GemmOp::kFwd;
  double m = 0, k = 0, n = 0;
  double t_s = 0;
};

// Causal flash attention (b, heads, s, head_dim): forward and forward+backward times.
struct SdpaPoint {
  double b = 0, heads = 0, s = 0, head_dim = 0;
  double t_fwd_s = 0, t_fwdbwd_s = 0;
};

// One collective call: `bytes` is the full (unsharded) buffer, as nccl-tests counts it.
struct CollectivePoint {
  Collective op = Collective::kAllReduce;
  DType dtype = DType::kBf16;
  int world = 2;
  int nodes = 1;  // nodes the group spans (1 = inside one node)
  double bytes = 0;
  double t_s = 0;
};

// Sailor-style per-layer times on one GPU type: layer 0 = embedding, last = head.
struct LayerTimePoint {
  int micro_batch = 1;
  int tp = 1;
  int layer = 0;
  double fwd_s = 0, bwd_s = 0, update_s = 0;
};

// Constants of the step model that are not read off a micro-benchmark. Defaults are the values
// fitted on the 1.3B rows of ../shared/gpu-h200/calibration.csv (docs/validation/planner.md §P).
struct ModelConstants {
  double host_op_s = 32e-6;            // host (CPU) time to dispatch one eager op (fitted)
  double host_ckpt_block_s = 1.65e-3;  // extra host time of one checkpointed block (fitted)
  double mem_efficiency = 0.80;        // elementwise/normalisation kernels vs the copy bandwidth (fitted)
  double kernel_min_s = 2.5e-6;        // shortest kernel on the device
  double alloc_const_bytes = 17e6;     // allocator-visible constants (cuBLAS workspace, loss scalars; set on 1.3B)
  double loss_bwd_bytes_per_logit = 12;  // live bytes per logit at the loss backward (set on 1.3B)
  double loss_fwd_bytes_per_logit = 8;   // live bytes per logit at the end of the loss forward
  double fsdp_unit_host_s = 1.5e-3;    // host time of one FSDP1 unit's hooks per step (1.3B FSDP row, data/profiles)
  // The two multi-GPU constants, fitted on every model size of ../shared/gpu-h200/calibration-2gpu.csv
  // (`orrery plan validate ... --leave-one-size-out` prints the fit; its held-out errors, fitted
  // without the size predicted, are in docs/plan-multigpu.md).
  double dtensor_op_factor = 4.0;      // DTensor dispatch cost in units of host_op_s (fitted on the tp rows)
  double comm_compute_slowdown = 0.55; // compute time lost per second of overlapped NCCL work (fitted on the DP rows)
};

struct GpuProfile {
  std::string gpu;             // e.g. "H200"
  std::string source;          // where it came from (file, provenance)
  double memory_bytes = 0;     // usable device memory
  double peak_bf16_tflops = 0;
  double membw_Bps = 0;        // device copy bandwidth, bytes read + written per second
  int gpus_per_node = 8;
  std::vector<GemmPoint> gemm;
  std::vector<SdpaPoint> sdpa;
  std::vector<CollectivePoint> collectives;
  std::vector<LayerTimePoint> layers;
  ModelConstants constants;
};

// Seconds of one GEMM of this shape (interpolated; exact on a measured shape).
double GemmTime(const GpuProfile& p, GemmOp op, double m, double k, double n);
// Seconds of causal attention forward (backward = false) or backward alone (true).
double SdpaTime(const GpuProfile& p, double b, double heads, double s, double head_dim, bool backward);
// Seconds of one collective of `bytes` (full buffer) over `world` ranks on `nodes` nodes.
// Uses the measured table of that (op, dtype, world, nodes) when present (log-log interpolation),
// else converts the bus bandwidth of the nearest measured group (nccl-tests convention).
double CollectiveTime(const GpuProfile& p, Collective op, DType dtype, double bytes, int world, int nodes);

std::string_view CollectiveName(Collective c);
Result<Collective> ParseCollective(std::string_view s);

// Reads the project's profile file (docs/formats/gpu-profile.md). Errors are located
// ("file:line:col: ..." for syntax, "file: at /gemm/3: field 't_s': ..." for content).
Result<GpuProfile> ParseProfileJson(std::string_view text, std::string_view file);
Result<GpuProfile> LoadProfile(const std::string& path);
// Reads ../shared/gpu-h200/micro/*.jsonl (the H200 micro-profiles: gemm, sdpa, membw, nccl).
Result<GpuProfile> LoadH200Micro(const std::string& micro_dir);
// Serialises a profile in the project's format.
std::string ProfileToJson(const GpuProfile& p);

}  // namespace orrery::plan
