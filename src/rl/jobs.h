// RL post-training jobs in a simulated workload (docs/design/rl.md, "In the simulator"): a
// jobs file (docs/formats/rl-jobs.md) or a share of generated RL jobs added to any trace, each
// expanded into one core job whose steps are RL steps timed by the step model under one
// strategy; and the run's RL figures for summary.json.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/harvest.h"
#include "model/outcome.h"
#include "model/trace.h"
#include "rl/strategy.h"

namespace orrery::rl {

// One RL job of a workload: who submits it when, the job as `orrery rl step` takes it, and how
// many RL steps it trains.
struct RlJobSpec {
  std::string where;  // file:line, for messages
  int64_t submit = 0;
  std::string user, vc, name;
  JobRequest request;
  uint32_t steps = 0;
};

// A jobs file: CSV with a header; `submit`, `model`, `gpus` and `steps` are required, the other
// columns (`user`, `vc`, `name`, `gpu`, `tp`, `prompts`, `samples`, `max_response`,
// `prompt_len`, `lengths`, `seed`) take `orrery rl step`'s defaults. Located errors.
Result<std::vector<RlJobSpec>> LoadRlJobs(const std::string& path);
Result<std::vector<RlJobSpec>> ParseRlJobs(std::string_view text, const std::string& name);

// RL jobs making `share` (0 < share < 1) of the jobs of `trace` once added, submitted uniformly
// over its submit span, each one of the settings of docs/design/rl.md ("Generated RL jobs")
// that fits in `max_gpus`, with a step count drawn from [50, 400]; seeded.
// They go to VC `vc` ("" = none) under user `rl`.
Result<std::vector<RlJobSpec>> GenerateRlJobs(const Trace& trace, double share, uint32_t max_gpus, const std::string& vc,
                                              uint64_t seed);

// A job's step under the strategy, with sync's for comparison.
struct RlStepCost {
  StepResult step;
  StepResult sync;
  uint32_t tp = 1;  // GPUs per rollout worker
};

struct ExpandedRlJob {
  uint32_t job = 0;  // index in the trace
  uint32_t steps = 0;
  uint32_t gpus = 0;
  const RlStepCost* cost = nullptr;  // owned by the RlExpansion
};

struct RlExpansion {
  std::string strategy;
  std::vector<ExpandedRlJob> jobs;
  std::map<std::string, RlStepCost> costs;  // one per distinct job setting
};

// Appends one core job per spec to `trace` (kind finetune, one rollout phase of `steps` RL
// steps at the step time of `strategy`). The step model runs once per distinct setting.
Result<RlExpansion> AddRlJobs(const std::vector<RlJobSpec>& specs, const std::string& strategy, Trace* trace);

// Under `harvest`: each RL job's lending schedule for the simulator (SimConfig::harvest), from
// its step's idle timeline: the GPUs of each idle rollout worker lent from when it goes idle,
// all returned at rollout end + the return wait. Jobs whose step lends nothing get no plan;
// other strategies: none.
std::vector<HarvestPlan> HarvestPlans(const RlExpansion& x);

// The run's RL figures (docs/formats/sim-output.md, "rl"): jobs, steps run, mean step time and
// breakdown, RL and idle rollout GPU-hours, sync's step time, and the other jobs' average JCT
// and preemptions.
struct RlReport {
  std::string strategy;
  uint32_t jobs = 0, finished = 0;
  double steps_run = 0;
  double step_time_s = 0, rollout_s = 0, tail_s = 0, reward_s = 0, train_s = 0, sync_s = 0, sync_step_time_s = 0;
  double gpu_hours = 0, idle_gpu_hours = 0;
  uint32_t other_jobs = 0;
  double other_avg_jct_s = 0;
  uint64_t other_preemptions = 0;
  HarvestStats harvest;  // the run's lending (harvest only)
};
RlReport SummarizeRl(const RlExpansion& x, const std::vector<JobOutcome>& outcomes, const HarvestStats& harvest = {});

}  // namespace orrery::rl
