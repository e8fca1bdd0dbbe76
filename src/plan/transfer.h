// An op-level profile for a GPU type the project has not measured, transferred from one it
// has (docs/design/planner.md, "Profiles of other GPU types"): Sailor's published per-layer
// times of GPT-Neo-2.7 (micro-batch 1, TP 1, the median transformer block's forward +
// backward) on the target and on GH-96 (GH200, the H100/H200-class GPU Sailor profiled) give
// one ratio r (A100-40 4.24, A100-80 4.19, V100-16 22.2); the base
// profile's GEMM and attention times and its copy bandwidth are scaled by it, its collective
// times by the datasheet NVLink ratio (H200 900 GB/s; A100 600; V100 300), and the target's
// memory and GPUs per node are Sailor's. Host constants stay the base's. An approximation: one number for the device's speed at this model's shapes.
#pragma once

#include <string>

#include "base/result.h"
#include "plan/profile.h"

namespace orrery::plan {

// The GPU types a profile can be transferred to: those with a GPT-Neo-2.7 profile in Sailor's
// data (A100-40, A100-80, V100-16).
bool TransferableGpu(const std::string& sailor_name);

// `base` (measured on an H200) transferred to `target` with the data under `sailor_dir`.
Result<GpuProfile> TransferProfile(const GpuProfile& base, const std::string& target, const std::string& sailor_dir);

}  // namespace orrery::plan
