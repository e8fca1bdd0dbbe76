// Strategies of an RL job's step, each a plugin in one table (name, summary, its paper's
// defaults, factory): sync (verl's colocated baseline), tlt (speculative decoding of the tail
// with a drafter trained on released workers), tail-batch (RollPacker), partial (APRIL),
// async (AReaL), harvest (idle rollout GPUs lent to preemptible jobs). docs/design/rl.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/harvest.h"
#include "rl/length.h"
#include "rl/rollout.h"
#include "rl/step.h"

namespace orrery::rl {

// One RL job as the strategies see it.
struct RlJob {
  uint32_t gpus = 8;
  uint32_t tp = 1;               // GPUs per rollout worker
  uint32_t prompts = 1;          // P
  uint32_t samples = 1;          // G responses per prompt
  uint32_t prompt_len = 0;       // tokens of every prompt
  uint32_t max_running = 1;      // running-batch cap per worker (engine limit and KV capacity)
  uint32_t tlt_max_running = 1;  // the same under TLT's engine limit
  LengthDist lengths;
  uint64_t seed = 1;
  // When not empty, responses take these lengths in turn instead of sampling (a recorded
  // step replayed; tests); a deferred prompt keeps its lengths.
  std::vector<uint32_t> fixed_lengths;
};

// What the strategies time the job with.
struct RlEnv {
  const StepTimer* timer = nullptr;
  const PhaseModel* phases = nullptr;
  AcceptModel accept;
  uint32_t draft_steps = 8;
};

struct StepResult {
  std::string name;
  double step_time_s = 0;
  double rollout_s = 0;
  double tail_s = 0;     // rollout time on the long tail (docs/design/rl.md, "Breakdown")
  double reward_s = 0;   // reward and the two log-prob forwards
  double train_s = 0;
  double sync_s = 0;
  double other_s = 0;    // a strategy's own cost (harvest: returning lent GPUs)
  double idle_gpu_frac = 0;
  double speedup_vs_sync = 0;
  double harvestable_gpu_s = 0;  // harvest: idle rollout GPU-seconds lendable per step
  double policy_lag = 0;         // partial, async: mean policy versions behind, per trained sequence
  double accept_length = 0;      // tlt: tokens per speculative step, smallest-batch bucket
  double drafter_trained = 0;    // tlt: share of the drafter update the idle GPUs could run
  uint32_t rollout_gpus = 0;     // async: GPUs of the rollout pool
  std::vector<BusySegment> timeline;  // rollout GPUs decoding over the (first) rollout
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual Result<StepResult> Step(const RlJob& job, const RlEnv& env) const = 0;
};

struct StrategyInfo {
  std::string_view name;
  std::string_view summary;
  std::string_view defaults;  // its paper's settings used here
  std::unique_ptr<Strategy> (*make)();
};
const std::vector<StrategyInfo>& Strategies();

// The same strategies with a setting other than their default: partial averaged over steps
// 2..`steps`, async with staleness bound `eta`.
std::unique_ptr<Strategy> MakePartial(uint32_t steps);
std::unique_ptr<Strategy> MakeAsync(uint32_t eta);

// GPU-seconds lendable during a rollout of `rollout_s` whose busy GPUs follow `timeline`
// (starting from `gpus`): the GPUs released at a segment's start are idle to the end; a
// borrower first pays `restore_s`.
double HarvestableGpuS(const std::vector<BusySegment>& timeline, uint32_t gpus, double rollout_s, double restore_s);
// Harvest's settings: the RL job waits this long for lent GPUs to come back (Slurm's default
// KillWait); a borrower's restart costs HarvestRestoreS of the job's TP (Helios' preemption
// overhead: 7 s for 1 GPU, 30 s up to 8, 60 s above).
inline constexpr double kHarvestReturnS = 30;
double HarvestRestoreS(uint32_t tp);
// The GPUs a harvest step lends and when (seconds into the step): each drop of the busy
// timeline whose GPUs stay idle longer than the borrower's restart; none when the step lends
// nothing (harvestable_gpu_s 0).
std::vector<HarvestRelease> HarvestReleases(const StepResult& step, uint32_t gpus, uint32_t tp);

// Runs `names` (each in the table; "sync" is run as the baseline even when not named) and
// fills speedup_vs_sync. Errors name an unknown strategy.
Result<std::vector<StepResult>> RunStrategies(const std::vector<std::string>& names, const RlJob& job,
                                              const RlEnv& env);

// Checked setup of a job on the inference cost model: TP divides the heads and the GPUs, the
// weights fit in the rollout engine's memory, the batch is possible; located errors.
struct JobRequest {
  std::string model = "qwen2.5-7b";
  std::string gpu = "h100";
  uint32_t gpus = 32;
  uint32_t tp = 0;  // 0: the default of the model size (docs/design/rl.md)
  uint32_t prompts = 64;
  uint32_t samples = 8;
  uint32_t max_response = 32768;
  uint32_t prompt_len = 1024;
  std::string lengths = "verl";
  uint64_t seed = 1;
};
struct CostSetup {
  plan::DecoderShape model;
  plan::InferGpu gpu;
  RlJob job;
  CostParams params;
};
Result<CostSetup> SetUpJob(const JobRequest& r);

}  // namespace orrery::rl
