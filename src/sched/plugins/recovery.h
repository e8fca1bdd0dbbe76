// Recovery policies: what the workload manager does when a training attempt
// fails. A closed set, built by name like the other plugins ("name[:key=value,...]"):
//   none                       the job fails; its user notices and resubmits after `human`
//   requeue[:from=scratch|checkpoint]  Slurm-like: requeued automatically on any nodes (no
//                              memory of the faulty node), every failure retried
//   acme[:spares=N]            Acme (NSDI'24 §3.1): diagnose, cordon the faulty node, restart
//                              from the last checkpoint on healthy nodes (hot spares first);
//                              script errors not retried; loss spikes rolled back; hangs
//                              detected from missing progress
//     restart=job|in-job       job: the gang is torn down and relaunched (the checkpoint
//                              plan's `restore`); in-job (ByteRobust's warm standby, NVRx
//                              in-job restart, FlashRecovery): the healthy ranks keep their
//                              processes, a warm spare takes the faulty node's ranks, the
//                              communicators are rebuilt in `reinit` s
//     overlap=true             the spare's swap / the in-job re-initialisation starts at
//                              detection (the detector names the node), concurrent with the
//                              diagnosis: the two cost max(diagnose, swap) instead of the sum
// Each policy's times (detection, diagnosis, rescheduling) are parameters with documented
// defaults (docs/design/failures.md). The decision for one fault is `Decide`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "base/result.h"
#include "base/time.h"
#include "model/fault.h"

namespace orrery {

struct RecoveryNone {
  Duration human = 3600;          // s until the user notices and resubmits (any failure)
  Duration watchdog = 1800;       // s a hang lasts before the framework's timeout kills it
  Duration reschedule = 600;      // s in the queue until the gang starts again
};
struct RecoveryRequeue {
  bool from_checkpoint = true;    // from=checkpoint|scratch
  Duration detect = 60;           // s until the RM sees the exit and requeues
  Duration watchdog = 1800;       // hangs: the framework's collective timeout
  Duration human = 3600;          // loss spikes and repeated script errors: a person acts
  Duration reschedule = 600;      // s in the queue until the gang starts again
  int max_requeues = 3;           // consecutive requeues of a script error before it is held
};
enum class RestartScope : uint8_t { kJob = 0, kInJob };

struct RecoveryAcme {
  uint32_t spares = 0;            // hot spare nodes, provisioned and warm
  Duration detect = 10;           // s to detect a crash (metric/heartbeat based)
  Duration hang_detect = 300;     // s without progress before a hang is declared
  Duration diagnose = 60;         // s to diagnose (log analysis + collective tests) and cordon
  Duration swap = 30;             // s to bring a hot spare into the gang
  Duration reschedule = 600;      // s to get a cold node when no spare is left
  Duration human = 3600;          // script errors: the user fixes and resubmits
  RestartScope restart = RestartScope::kJob;
  Duration reinit = 150;          // in-job: s to rebuild the process groups with the spare (FlashRecovery:
                                  // 150 s end to end on 4,800 devices, scale-independent)
  bool overlap = false;           // swap / re-initialisation concurrent with the diagnosis
};
using RecoveryPolicy = std::variant<RecoveryNone, RecoveryRequeue, RecoveryAcme>;

// Parses "none", "requeue:from=scratch", "acme:spares=16,detect=10s", ... Durations take a
// unit suffix s/m/h/d (none = seconds). Unknown names or keys are errors naming the choices.
Result<RecoveryPolicy> MakeRecovery(const std::string& spec);
std::string_view RecoveryName(const RecoveryPolicy& p);  // "none", "requeue", "acme"
// "120", "90s", "5m", "3h", "2d" -> seconds (non-negative).
Result<Duration> ParseDurationText(std::string_view text);

// What to do about one fault of a running attempt.
struct RecoveryAction {
  bool retry = true;            // restart the job (after `downtime`)
  bool automatic = true;        // false: a person restarts it (counted as a manual intervention)
  bool from_checkpoint = true;  // false: from step 0
  bool cordon = false;          // take the faulty node out (node faults only)
  bool use_spare = false;       // replace it from the hot spares when one is left
  bool in_job = false;          // in-job restart (when a spare is left for a node fault):
                                // `reinit` replaces the swap and the job's relaunch
  bool overlap = false;         // the swap (or reinit) runs during the diagnosis
  Duration reinit = 0;          // in-job: s to rebuild the process groups
  Duration detect = 0;          // from the fault to its detection (hangs, loss spikes: wasted running)
  Duration diagnose = 0;        // detection → decision (includes a person's delay)
  Duration reschedule = 0;      // decision → the gang's nodes are allocated again
  Duration reschedule_cold = 0; // the same when the node is replaced and no hot spare is left
  // From the fault until the decision the attempt keeps its nodes: the detection (the fault
  // runs unnoticed) and, for an automatic retry, the diagnosis (it runs on them); a person's
  // delay does not hold them. `noticed`: the fault's time is its detection already (a trace's
  // recorded end is when the job exited). Trace runs hold the GPUs this long.
  Duration HeldFor(bool noticed) const { return (noticed ? 0 : detect) + (retry && automatic ? diagnose : 0); }
};
// `repeats`: how many times in a row this attempt's code already failed with a script error.
RecoveryAction Decide(const RecoveryPolicy& p, FaultCause cause, int repeats = 0);

}  // namespace orrery
