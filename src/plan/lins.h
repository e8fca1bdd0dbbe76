// Lins (AMSP) at scale: MFU of ZeRO-1, ZeRO-3, MiCS and Lins' chosen sharding of LLaMA-type
// models on A800 nodes with InfiniBand, from Lins' per-step communication formulas
// (../shared/specs/lins.md §2.2) and a documented bandwidth table; reproduces the shape of the
// paper's MFU-vs-scale curves (51 % at 1,024 GPUs vs MiCS 35 % vs ZeRO-3 about 5 % for LLaMA-7B).
#pragma once

#include <string>
#include <vector>

#include "plan/model.h"
#include "plan/plan.h"
#include "plan/profile.h"

namespace orrery::plan {

// The A800/IB table (assumptions, docs/validation/planner.md §P.2): 8 GPUs per node on NVLink (400 GB/s
// A800 links; NCCL bus bandwidth 150 GB/s inside a node), 4 × HDR InfiniBand per node (100 GB/s
// per node; NCCL bus bandwidth across nodes 45 GB/s), latency 15 µs per intra-node collective,
// 6 µs per ring step for all-gather / reduce-scatter / broadcast across nodes, 20 µs per tree
// level for all-reduce across nodes.
struct IbFabric {
  int gpus_per_node = 8;
  double intra_busbw = 150e9;
  double inter_busbw = 45e9;
  double intra_latency = 15e-6;
  double ring_step_latency = 6e-6;
  double tree_level_latency = 20e-6;
  double peak_flops = 312e12;        // A800 dense bf16
  double compute_efficiency = 0.65;  // kernels alone (flash attention 2, seq 4096, micro-batch 1)
  double overlap = 0.8;              // share of the compute a prefetched / bucketed collective can hide behind
  double overlap_slowdown = 0.1;     // compute slowdown per second of hidden communication (NCCL shares the SMs)
  double module_hook_s = 150e-6;     // host cost of one per-module parameter fetch (ZeRO-3-style hooks), never hidden
  // Seconds of one collective of `bytes` (full buffer) over s0 GPUs per node × s1 nodes.
  double Time(Collective op, double bytes, int s0, int s1) const;
};

enum class ZeroScheme { kZero1, kZero3, kMics, kLins };

struct ScalePoint {
  int gpus = 0;
  ZeroScheme scheme = ZeroScheme::kLins;
  Sharding shard;
  double step_s = 0, compute_s = 0, exposed_comm_s = 0;
  double mfu = 0;
};

// One training step of `model` (seq tokens per sequence, one sequence per micro-batch,
// global_tokens per step) on `gpus` GPUs under `scheme`; Lins' sharding is chosen by brute force
// over its constraints (memory of `gpu_memory` bytes) minimising communication.
ScalePoint LinsStep(const GptModel& model, int64_t seq, double global_tokens, int gpus, ZeroScheme scheme,
                    const IbFabric& f, double gpu_memory);

std::string_view SchemeName(ZeroScheme s);

}  // namespace orrery::plan
