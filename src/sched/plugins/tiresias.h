// Tiresias (Gu et al., NSDI'19): discretized two-dimensional least-attained-service
// (2D-LAS) and 2D-Gittins scheduling on attained GPU-service, as specified in
// ../shared/specs/tiresias.md.
//
//   * attained service a_j = GPUs × executed seconds (service=time: executed seconds),
//     tracked across preemptions (SchedJob::attained + the current running segment);
//   * K queues split by thresholds T_0 < T_1 < …: a job is in Q_q when T_{q-1} ≤ a_j < T_q
//     (counted since its last starvation promotion); new jobs enter Q0;
//   * within a queue: FIFO by submit time (2D-LAS) or Gittins index descending, then submit
//     order (2D-Gittins: index P/E from the GPU-time distribution of the jobs finished so far,
//     evaluated at the attained service rounded down to a multiple of the quantum Δ, so a
//     job's rank changes once per quantum, not continuously);
//   * a decision walks all running and pending jobs of a VC in (queue, FIFO) order and
//     admits each job whose GPUs fit the VC's remaining GPU count (count-based: a job that
//     does not fit is skipped, later smaller jobs may run); running jobs not admitted are
//     preempted (restart overhead 40 s for ≤ 8 GPUs, 60 s above), admitted pending jobs are
//     placed by the placer (a placement failure leaves the job pending until the next
//     decision);
//   * starvation control (PromoteKnob): a pending job of Q_{>0} that has waited
//     ≥ knob × its executed time (seconds) since it was last queued gets its executed
//     service reset to 0 and returns to Q0 (knob = 0: off);
//   * restart protection: a job restarted after a preemption keeps its GPUs for
//     protect × its restart overhead (default 2: 80 s / 120 s) before it can be preempted
//     again, so each restart buys net progress (without it, starvation promotion or Gittins
//     re-ranking can preempt a many-GPU job before it recovers its restart cost, forever —
//     seen on HPC2N with knob=1); protect=0 turns it off;
//   * decisions every `interval` seconds (periodic, as in Lucid's baseline), or at every
//     arrival/completion with exact demotion/promotion wake-ups (interval = 0, as in the
//     original simulator).
//
// Spec strings (MakePolicy):
//   tiresias                       original: thresholds 3250/7200 GPU-s (3 queues), event-driven
//   tiresias:preset=lucid          Lucid's baseline: 2 queues, 18,000 GPU-s, decisions every 60 s
//   parameters: thresholds=T0/T1/… (GPU-s, increasing), interval=S (0 = event-driven),
//               knob=X (starvation PromoteKnob, 0 = off), gittins=true|false, delta=Δ (GPU-s,
//               Gittins quantum, default 3250), service=gpu|time, protect=X (default 2)
#pragma once

#include <cstdint>
#include <vector>

#include "sched/framework/api/policy_parts.h"

namespace orrery {

struct TiresiasOptions {
  std::vector<int64_t> thresholds = {3250, 7200};
  Duration interval = 0;
  double knob = 0;
  bool gittins = false;
  int64_t delta = 3250;
  bool gpu_time = true;  // service = GPUs × seconds (false: seconds only, "dlas")
  double protect = 2;    // a restarted job is not preempted for protect × its restart overhead
};

// Fills parts.sort, parts.reschedule, tick and the preemption overhead.
void InstallTiresias(const TiresiasOptions& o, PolicyParts* parts);

// Restart overhead of Lucid's framework: 40 s for ≤ 8 GPUs, 60 s above.
Duration LucidPreemptionOverhead(uint32_t gpus);

}  // namespace orrery
