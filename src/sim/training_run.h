// One long gang training job under failures (figures: a 54-day pretraining run on
// 2,048 nodes x 8 GPUs): faults drawn from a FailureModel over the gang's nodes, checkpoints
// from a CheckpointPlan, recovery decided by a RecoveryPolicy (sched/plugins/recovery.h), nodes
// cordoned, repaired and replaced from hot spares or a cold pool. Every second of wall time
// lands in exactly one bucket (productive, lost work, restart overhead, checkpoint stall,
// waiting for nodes), so ETTR = productive / wall is exact. Deterministic per seed (streams
// "failures/time", "failures/cause", "failures/node", "failures/persist").
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "model/attempt.h"
#include "model/fault.h"
#include "sched/plugins/recovery.h"
#include "sim/checkpoint_plan.h"
#include "sim/failure_model.h"

namespace orrery {

struct TrainingRunSpec {
  uint32_t nodes = 2048;
  uint32_t gpus_per_node = 8;
  Duration horizon = 54 * 86400;  // wall time since the first start
  uint32_t cold_nodes = 64;       // idle healthy nodes besides the policy's hot spares
};

// Wall-time buckets (s); they sum to the horizon.
struct TimeBuckets {
  Duration productive = 0;  // training whose result is kept
  Duration lost_work = 0;   // training redone after a failure (since the last durable checkpoint,
                            // a loss spike's rolled-back and unnoticed steps)
  Duration detect = 0;      // fault → detection (hangs until the watchdog)
  Duration diagnose = 0;    // detection → decision (a person's delay for manual recovery)
  Duration reschedule = 0;  // decision → gang allocated (spare swap, queue wait)
  Duration load = 0;        // checkpoint load / initialisation
  Duration stall = 0;       // checkpoint stalls while training
  Duration waiting = 0;     // no healthy node to replace a cordoned one: waiting for a repair
  Duration restart_overhead() const { return detect + diagnose + reschedule + load; }
  Duration total() const { return productive + lost_work + restart_overhead() + stall + waiting; }
};

struct TrainingRunResult {
  TimeBuckets time;
  double ettr = 0;                 // productive / horizon
  double mtbf_s = 0;               // nominal MTBF of the gang (healthy nodes)
  Duration interval = 0;           // checkpoint interval used (s of training; 0 = none)
  std::array<uint32_t, kNumFaultCauses> faults{};
  std::array<uint32_t, kNumFailureCategories> by_category{};
  uint32_t restarts = 0;           // attempts after the first
  uint32_t manual = 0;             // recoveries a person had to start
  uint32_t cordoned = 0;           // nodes taken out
  uint32_t spares_used = 0;        // of which replaced by a hot spare
  uint32_t repeat_faults = 0;      // faults on a node that had already faulted in this run
  uint32_t flaky_faults = 0;       // faults on a node whose earlier fault persisted (not repaired yet)
  uint32_t in_job_restarts = 0;    // restarts that kept the healthy ranks' processes (restart=in-job)
  uint32_t memory_restores = 0;    // restarts from a copy in host memory (memory checkpoint plans)
  double mttr_s = 0;               // mean fault → training again (detect..load, waiting)
  AttemptLog attempts;             // one per attempt (job 0), node lists omitted
};

Result<TrainingRunResult> SimulateTrainingRun(const TrainingRunSpec& spec, const FailureModel& model,
                                              const CheckpointPlan& plan, const RecoveryPolicy& policy, uint64_t seed);

}  // namespace orrery
