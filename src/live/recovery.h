// Recovery in the live driver (docs/design/live-recovery.md): when Slurm
// reports a managed job FAILED / NODE_FAIL / TIMEOUT / OUT_OF_MEMORY / BOOT_FAIL, or a
// running job stops making progress, the daemon reads the tail of its StdOut/StdErr, diagnoses
// it with the same rules as `orrery diagnose` (logs/diagnose.h), and the recovery policy of the
// simulator (sched/plugins/recovery.h: none, requeue, acme) decides: drain the suspect node and
// requeue, requeue, or give up (script errors). This header holds the pure parts: the
// triggers, the verdict rule (Judge), the job-comment keys of the restart contract, the
// heartbeat and the one-off tail read. The daemon's side (journal, apply path, API) is
// the Recoverer (recoverer.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "live/slurm_client.h"
#include "logs/diagnose.h"
#include "model/attempt.h"
#include "model/fault.h"
#include "sched/plugins/recovery.h"

namespace orrery::live {

// What set a recovery off.
enum class Trigger : uint8_t { kFailed, kNodeFail, kBootFail, kTimeout, kOutOfMemory, kHang };
std::string_view TriggerName(Trigger t);  // "failed", "node-fail", "boot-fail", "timeout", "out-of-memory", "hang"
Trigger TriggerOf(SlurmFailure f);        // kNone (not a failure) counts as kFailed

// What the daemon does about it.
enum class RecoveryStep : uint8_t {
  kRequeue,       // requeue (held; the policy starts it again on healthy nodes)
  kDrainRequeue,  // drain the suspect node, then requeue
  kGiveUp,        // not retried: the reason is recorded and shown in the API
};
std::string_view StepName(RecoveryStep s);  // "requeue", "drain-requeue", "give-up"
// The names back (the journal's rows); nullopt for any other text.
std::optional<Trigger> ParseTrigger(std::string_view name);
std::optional<RecoveryStep> ParseStep(std::string_view name);

// The serve config's [recovery] table (docs/formats/serve-config.md).
struct RecoveryOptions {
  std::string policy = "acme";          // MakeRecovery spec (none | requeue[:...] | acme[:...])
  Duration hang_after = 600;            // s without progress before a watched job is hung (0 = off)
  int max_drains_per_hour = 2;          // more wait for an operator's confirmation (API)
  int max_restarts = 3;                 // recoveries of one job that requeue it; then it is given up
  size_t log_tail_bytes = 256 * 1024;   // read from the end of each of StdOut / StdErr
};

// One failed or hung job, as the daemon knows it.
struct Incident {
  Trigger trigger = Trigger::kFailed;
  std::vector<std::string> nodes;  // where the failed attempt ran
  int restarts = 0;                // earlier recoveries of this job that requeued it
  std::string_view log;            // the output tail the diagnosis read
};

struct RecoveryVerdict {
  FaultCause cause = FaultCause::kFramework;
  FailureKind kind = FailureKind::kUnknown;  // for the core's Fail
  RecoveryStep step = RecoveryStep::kGiveUp;
  std::string suspect;  // the node to drain (kDrainRequeue), else the suspect named, if any ("" none)
  std::string reason;   // one line for people: "<category>/<subtype> on <node>: <evidence>; <what is done>"
};

// The fault a diagnosis stands for (the simulator's FaultCause), given what set it off.
FaultCause CauseOf(const logs::Diagnosis& d, Trigger t);
// The suspect among the incident's nodes: one the diagnosis names; else the one node of the
// job named in its evidence lines; else in the log; else the job's only node. "" when none
// can be told (several named, or none of several).
std::string SuspectNode(const logs::Diagnosis& d, const Incident& inc);
// The one rule: the recovery policy's action for the diagnosed cause (Decide), a retry only
// when the policy retries it automatically, the rules do not say a retry fails again
// (retry = false; the requeue policy retries regardless, as Slurm does), and the job has
// restarts left; a drain only when the policy cordons the cause and a suspect is known.
RecoveryVerdict Judge(const RecoveryPolicy& policy, const logs::Diagnosis& d, const Incident& inc, int max_restarts);

// --- the restart contract's job-comment keys (docs/design/live-recovery.md)
// The value of "orrery:<key>=VALUE" in a job comment (up to whitespace or ','), "" if absent.
std::string CommentValue(std::string_view comment, std::string_view key);
// The job's heartbeat file ("orrery:heartbeat=PATH", "%j" replaced by the job id), "" if none.
std::string HeartbeatPath(std::string_view comment, uint32_t job);
// The job's own hang timeout ("orrery:hang=SECONDS"), -1 if none.
Duration HangAfter(std::string_view comment);
// The heartbeat's last beat (the file's modification time, whole seconds), kNoTime if absent.
Time LastBeat(const std::string& path);


}  // namespace orrery::live
