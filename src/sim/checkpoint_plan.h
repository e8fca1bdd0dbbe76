// How a training phase checkpoints: synchronous (the job stalls while it writes)
// or asynchronous (Acme, CheckFreq: a short stall snapshots the state to host memory, a
// background thread persists it; the checkpoint is durable only once persisted), or in memory
// (Gemini, SOSP'23; NVRx local checkpoints with replication: the snapshot is replicated to
// `peers` other nodes' host memory and is restorable from there once replicated; every
// `persist_every` of training one of them is also written to storage), at a fixed interval or
// at the Young/Daly optimum sqrt(2 C M) from the stall C and the job's MTBF M.
// It lowers to the core's CheckpointPolicy (model/work.h) for the event simulator.
#pragma once

#include <string>

#include "base/result.h"
#include "base/time.h"
#include "model/fault.h"
#include "model/work.h"

namespace orrery {

enum class CheckpointMode : uint8_t { kNone = 0, kSync, kAsync, kMemory };

struct CheckpointPlan {
  CheckpointMode mode = CheckpointMode::kNone;
  bool young_daly = false;  // interval from the failure rate (else `interval`)
  Duration interval = 0;    // s of training between checkpoints (fixed)
  Duration write = 120;     // s to write one checkpoint to durable storage
  Duration snapshot = 5;    // async, memory: s the job stalls to copy its state to host memory
  Duration restore = 300;   // s to load a checkpoint at a job restart (incl. re-initialisation)
  Duration init = 120;      // s to start the job from scratch (no checkpoint to load)
  // memory only:
  uint32_t peers = 1;             // other nodes holding a copy of each node's snapshot (0 = local only)
  Duration replicate = 1;         // s after the snapshot until the peers hold it (background)
  Duration persist_every = 3600;  // s of training between the copies also written to storage
  Duration restore_memory = 1;    // s to fetch the state from host memory in an in-job restart

  // Seconds the job stalls per checkpoint: sync = write, async and memory = snapshot.
  Duration stall() const {
    switch (mode) {
      case CheckpointMode::kNone: return 0;
      case CheckpointMode::kSync: return write;
      case CheckpointMode::kAsync:
      case CheckpointMode::kMemory: return snapshot;
    }
    return 0;
  }
  // After a checkpoint's stall, s until it can be restored: async = write (in the background),
  // memory = replicate (to the peers' host memory).
  Duration persist_lag() const {
    switch (mode) {
      case CheckpointMode::kNone:
      case CheckpointMode::kSync: return 0;
      case CheckpointMode::kAsync: return write;
      case CheckpointMode::kMemory: return replicate;
    }
    return 0;
  }
};

// Where a restart after `cause` finds the last checkpoint (docs/design/failures.md): in host
// memory when the plan keeps copies there and one survived (a peer's copy always does, the
// fault takes one node; a local copy only when the node stays in the gang and was not
// rebooted: not after a host fault), else on storage. A loss spike rolls back further than
// the memory copies reach: storage.
enum class RestoreTier : uint8_t { kMemory = 0, kStorage };
RestoreTier TierAfter(const CheckpointPlan& p, FaultCause cause, bool node_replaced);

// Young (CACM'74): tau = sqrt(2 C M) for stall C and MTBF M (s), rounded to whole seconds.
Duration YoungDalyInterval(Duration stall, double mtbf_s);
// The interval a plan uses for a job with MTBF `mtbf_s`: fixed, or Young/Daly, never shorter
// than the persist lag (an async checkpoint is not started before the previous one persisted)
// nor than 1 s. 0 = no checkpoints.
Duration IntervalFor(const CheckpointPlan& p, double mtbf_s);

// What `wall` seconds of running do from durable training time `from`, checkpointing every
// `interval` s of training (0 = never): each checkpoint stalls `stall()`, and is durable
// `persist_lag()` s after its stall ends. A failure then loses from + work - durable.
// Memory plans: `durable_memory` is the last replicated copy; every m-th checkpoint of the
// attempt (m = persist_every / interval rounded, at least 1 and never a copy before the
// previous one is written: m x (interval + stall) >= write) is also written to storage in
// `write` s; `durable` is the last one on storage, `from_storage` when none is yet (the attempt
// restarted from memory at `from`; -1 = from).
struct CheckpointProgress {
  Duration work = 0;            // s of training done
  Duration stall = 0;           // s stalled writing/snapshotting
  Duration durable = 0;         // training time covered by the last checkpoint on storage
  Duration durable_memory = 0;  // memory plans: by the last copy in the peers' memory (>= durable)
};
CheckpointProgress RunWithCheckpoints(const CheckpointPlan& p, Duration interval, Duration from, Duration wall,
                                      Duration from_storage = -1);
// Memory plans: every how many checkpoints one goes to storage (see above); else 1.
Duration StorageEvery(const CheckpointPlan& p, Duration interval);

// "none", "sync:every=3h", "async:every=young-daly,write=120s,snapshot=5s,restore=5m,init=2m",
// "memory:every=young-daly,snapshot=1s,replicate=1s,peers=1,persist_every=1h,restore_memory=1s".
Result<CheckpointPlan> MakeCheckpointPlan(const std::string& spec);

// The core's policy for one phase at step time `seconds_per_step` (every_seconds = interval,
// cost = stall, restore); the async persist lag has no field there (see docs/design/failures.md).
CheckpointPolicy ToCheckpointPolicy(const CheckpointPlan& p, double mtbf_s);

}  // namespace orrery
