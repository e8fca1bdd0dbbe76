// Attempts: every run of a job, from a start to the end of that run, whatever ended it.
// JobOutcome (outcome.h) stays the compact per-job record; attempts are a side log
// (AttemptLog) written as attempts.csv (docs/formats/attempts.md).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/time.h"

namespace orrery {

// Why an attempt ended.
enum class EndCause : uint8_t {
  kFinished = 0,  // the job's work is done (the only cause that teaches duration estimators)
  kFailed,        // the job failed (FailureKind; restartable or not)
  kPreempted,     // the scheduler took its resources back (it waits again, work since the
                  // last durable checkpoint lost)
  kWithdrawn,     // cancelled by its user or an operator: it leaves the system
  kRequeued,      // sent back to the queue by the resource manager or a staging stage
                  // (e.g. handed over from Lucid's profiler), work kept
  kNodeLost,      // a node it ran on went away; it waits again
  kUnfinished,    // still running when the run stopped (horizon / explain stop)
};
inline constexpr int kNumEndCauses = 7;
std::string_view EndCauseName(EndCause c);  // "finished", "failed", ... (attempts.csv)

enum class FailureKind : uint8_t {
  kNone = 0,   // not a failure
  kUser,       // the job's own error (non-zero exit, bad input)
  kOom,        // out of GPU/host memory
  kHardware,   // GPU/NIC/node fault
  kTimeout,    // hit its time limit
  kUnknown,
};
inline constexpr int kNumFailureKinds = 6;
std::string_view FailureKindName(FailureKind k);  // "", "user", "oom", "hardware", "timeout", "unknown"

// One attempt. 56 bytes; the allocation's node list lives in the owning log's pool.
struct Attempt {
  JobId job;
  uint32_t nodes_at = 0;       // index of its first node id in AttemptLog::nodes
  Time start = kNoTime;
  Time end = kNoTime;
  int64_t steps_done = 0;      // the job's total steps done when it ended (cumulative)
  int64_t steps_durable = 0;   // steps covered by its last durable checkpoint when it ended
  uint32_t gpus = 0;           // GPUs it held
  uint16_t node_count = 0;
  EndCause cause = EndCause::kFinished;
  FailureKind failure = FailureKind::kNone;
  bool restartable = false;    // kFailed: the job went back to the queue
  uint8_t index = 0;           // 0-based attempt number of the job (saturates at 255)
};
static_assert(sizeof(Attempt) == 56);

// Append-only log of attempts in the order they ended.
struct AttemptLog {
  std::vector<Attempt> attempts;
  std::vector<NodeId> nodes;  // pool of allocation node lists
  // Appends an attempt with its allocation's nodes (in allocation order).
  void Add(Attempt a, const NodeId* first, size_t count) {
    a.nodes_at = static_cast<uint32_t>(nodes.size());
    a.node_count = static_cast<uint16_t>(count);
    nodes.insert(nodes.end(), first, first + count);
    attempts.push_back(a);
  }
};

}  // namespace orrery
