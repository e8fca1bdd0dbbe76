// How a training phase checkpoints (issue #12): synchronous (the job stalls while it writes)
// or asynchronous (Acme, Gemini, CheckFreq: a short stall snapshots the state to host memory,
// a background thread persists it; the checkpoint is durable only once persisted), at a fixed
// interval or at the Young/Daly optimum sqrt(2 C M) from the stall C and the job's MTBF M.
// It lowers to the core's CheckpointPolicy (model/work.h) for the event simulator.
#pragma once

#include <string>

#include "base/result.h"
#include "base/time.h"
#include "model/work.h"

namespace orrery {

enum class CheckpointMode : uint8_t { kNone = 0, kSync, kAsync };

struct CheckpointPlan {
  CheckpointMode mode = CheckpointMode::kNone;
  bool young_daly = false;  // interval from the failure rate (else `interval`)
  Duration interval = 0;    // s of training between checkpoints (fixed)
  Duration write = 120;     // s to write one checkpoint to durable storage
  Duration snapshot = 5;    // async: s the job stalls to copy its state to host memory
  Duration restore = 300;   // s to load a checkpoint at a restart (incl. re-initialisation)
  Duration init = 120;      // s to start the job from scratch (no checkpoint to load)

  // Seconds the job stalls per checkpoint: sync = write, async = snapshot.
  Duration stall() const { return mode == CheckpointMode::kAsync ? snapshot : mode == CheckpointMode::kSync ? write : 0; }
  // After a checkpoint's stall, s until it is durable: async = write (in the background).
  Duration persist_lag() const { return mode == CheckpointMode::kAsync ? write : 0; }
};

// Young (CACM'74): tau = sqrt(2 C M) for stall C and MTBF M (s), rounded to whole seconds.
Duration YoungDalyInterval(Duration stall, double mtbf_s);
// The interval a plan uses for a job with MTBF `mtbf_s`: fixed, or Young/Daly, never shorter
// than the persist lag (an async checkpoint is not started before the previous one persisted)
// nor than 1 s. 0 = no checkpoints.
Duration IntervalFor(const CheckpointPlan& p, double mtbf_s);

// What `wall` seconds of running do from durable training time `from`, checkpointing every
// `interval` s of training (0 = never): each checkpoint stalls `stall()`, and is durable
// `persist_lag()` s after its stall ends. A failure then loses from + work - durable.
struct CheckpointProgress {
  Duration work = 0;     // s of training done
  Duration stall = 0;    // s stalled writing/snapshotting
  Duration durable = 0;  // training time covered by the last durable checkpoint (>= from)
};
CheckpointProgress RunWithCheckpoints(const CheckpointPlan& p, Duration interval, Duration from, Duration wall);

// "none", "sync:every=3h", "async:every=young-daly,write=120s,snapshot=5s,restore=5m,init=2m".
Result<CheckpointPlan> MakeCheckpointPlan(const std::string& spec);

// The core's policy for one phase at step time `seconds_per_step` (every_seconds = interval,
// cost = stall, restore); the async persist lag has no field there (see docs/design/failures.md).
CheckpointPolicy ToCheckpointPolicy(const CheckpointPlan& p, double mtbf_s);

}  // namespace orrery
