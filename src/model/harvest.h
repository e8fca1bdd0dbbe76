// Harvest of an RL job's idle rollout GPUs (docs/design/rl.md, "Harvest in the simulator"):
// the per-step lending schedule a simulated RL job follows, and what a run lent and harvested.
// Plain data: the RL step model (rl/) writes plans, the simulator (sim/harvest.h) runs them.
#pragma once

#include <cstdint>
#include <vector>

namespace orrery {

// `gpus` rollout GPUs go idle `at_s` seconds into a step and are lent until the return.
struct HarvestRelease {
  double at_s = 0;
  uint32_t gpus = 0;
};

// The lending schedule of one RL job, the same every step (the step model's idle timeline).
struct HarvestPlan {
  uint32_t job = 0;       // trace index of the RL job
  double step_s = 0;      // seconds per step (its phase's seconds_per_step)
  double return_s = 0;    // seconds into a step when every lent GPU is back (rollout end + return wait)
  std::vector<HarvestRelease> releases;  // at_s ascending, each below return_s
};

// What a run's RL jobs lent (SimResult::harvest; zero without plans).
struct HarvestStats {
  uint64_t lends = 0;                 // lend events (GPUs of idle rollout workers handed over)
  uint64_t returns = 0;               // steps whose lent GPUs were taken back at the phase boundary
  uint64_t borrower_starts = 0;       // attempts that started on a node holding lent GPUs
  uint64_t borrower_preemptions = 0;  // borrowers preempted to give the GPUs back
  double lent_gpu_seconds = 0;        // GPU-seconds the RL jobs did not hold while lending
  double harvested_gpu_seconds = 0;   // of them, held by borrowers
};

}  // namespace orrery
