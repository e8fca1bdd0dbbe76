// Semantic payloads for simulated jobs. Traces carry no launch configs,
// so each job gets one generated to be consistent with its truth: a model sized for its
// GPU count and length, batch and sequence sizes, parallelism that fits its GPUs, and a
// step count that makes the planned run take the job's recorded duration at a noisy
// achieved efficiency (docs/design/semantic.md, "Payload generator"). Jobs that failed or
// were cancelled planned a longer run than they got. Written as a real launch file (a
// Megatron-LM Slurm script for 60 % of the jobs of 8 GPUs or more, else a Hugging Face
// torchrun command line; both name the GPUs), so the estimator goes through the same reader
// as a user's file. Deterministic per (seed, job id).
#pragma once

#include <cstdint>
#include <string>

#include "model/job.h"

namespace orrery::semantic {

struct PayloadOptions {
  double peak_flops = 125e12;  // per GPU (V100 tensor-core FP16: the GPUs of Philly/Helios-era traces)
  double mfu_median = 0.35;    // achieved model-FLOPs utilisation: median ...
  double mfu_sigma = 0.35;     // ... and log-normal spread across jobs
  double overhead_median_s = 60;  // start-up, data loading, final save (log-normal, sigma 0.5)
  double epochs_only_fraction = 0.15;  // configs that give epochs, not steps (the reader cannot time them)
};

struct SemanticPayload {
  std::string file_name;  // "job-123.sh", "job-123.yaml"
  std::string text;
  // The truth behind the text (tests and calibration checks only; estimators never read it).
  double planned_s = 0;
  double params_b = 0;
  double mfu = 0;
  double step_s = 0;
  uint64_t steps = 0;
};

SemanticPayload GeneratePayload(const Job& job, uint64_t seed, const PayloadOptions& options = {});

}  // namespace orrery::semantic
