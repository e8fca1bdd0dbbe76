// Failures of a trace run (`orrery simulate --failures trace|model:SPEC --recovery SPEC`):
// the SimConfig::failures list the event simulator injects (docs/design/failures.md).
//   trace:       a job's recorded final state is honoured: FAILED (category drawn from the
//                failure model's competing hazards, default `acme`), NODE_FAIL (infrastructure)
//                and TIMEOUT (not retried) end its first attempt 1 s before its recorded end;
//                whether it is retried is the recovery policy's decision.
//   model:SPEC:  every attempt (up to `max_attempts`) draws a time to failure from the model's
//                hazards (node causes x its nodes, framework, hangs; script errors in the first
//                attempt only); a failure before the job's duration is injected.
// Both take the recovery policy's decision (sched/plugins/recovery.h, the same Decide as the
// training runs): retried or not, the GPUs held from the fault to the decision (detection and
// diagnosis; a recorded end is its detection already), the node cordoned for the model's
// `repair` (acme).
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"
#include "sched/plugins/recovery.h"
#include "sim/checkpoint_plan.h"
#include "sim/failure_model.h"
#include "sim/simulator.h"

namespace orrery {

// Counts by category of what was injected (summary.json "failures").
struct InjectedSummary {
  std::array<uint64_t, kNumFailureCategories> by_category{};
  uint64_t timeouts = 0;  // TIMEOUT jobs (not a category)
  uint64_t retried = 0, not_retried = 0;
  double held_gpu_seconds = 0;  // sum over injected failures of hold x GPUs (an upper bound: a
                                // drawn fault on an attempt that never runs holds nothing)
};

std::vector<InjectedFailure> RecordedFailures(const Trace& trace, const FailureModel& m, const RecoveryPolicy& policy,
                                              uint32_t gpus_per_node, uint64_t seed, InjectedSummary* summary);
std::vector<InjectedFailure> DrawFailures(const Trace& trace, const FailureModel& m, const RecoveryPolicy& policy,
                                          uint32_t gpus_per_node, uint64_t seed, int max_attempts,
                                          InjectedSummary* summary);

// `--checkpoint SPEC` in a trace run: each GPU job becomes one train phase of `duration` steps
// at 1 s/step with the plan's policy (interval from the job's MTBF under `m` for Young/Daly);
// jobs without GPUs or duration keep no phases (trace jobs).
std::vector<WorkSpec> CheckpointedWork(const Trace& trace, const FailureModel& m, const CheckpointPlan& plan,
                                       uint32_t gpus_per_node);

}  // namespace orrery
