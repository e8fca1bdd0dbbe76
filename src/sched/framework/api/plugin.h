// Scheduling framework: the extension points every policy is assembled from.
//
//   Admit        (at submit)      may this job ever run here? quota / feasibility
//   QueueSort    (exactly one)    the order pending jobs are considered in (a cached key)
//   Place        (filter + score) which nodes/GPUs a job gets now, or why none
//   PostFilter   (when the job under consideration cannot be placed)
//                                 backfill around it (with a reservation) or preempt for it
//   Reschedule   (scheduler.h; at each VC cycle, before or instead of the queue walk)
//                                 re-decide running and pending jobs together (Tiresias)
//
// Explain hook (`orrery explain`): Plugin::Describe reports a job's state; plugins report
// decisions about the watched job through SchedulerHandle::watched/Note (scheduler.h).
//
// Plugins never see the driver: they read a ClusterState snapshot, the scheduler's
// pending/running views, an injected clock value and estimators, and return
// outcomes that say why (PluginStatus carries a static reason and the plugin name,
// so "why is job X pending" is answerable without formatting strings in the hot path).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/time.h"
#include "model/job.h"
#include "predict/estimator.h"
#include "sched/framework/cluster_state.h"
#include "sched/framework/api/oracle.h"

namespace orrery {

enum class Code : uint8_t {
  kOk = 0,
  kUnschedulable,         // not now; may fit later
  kUnschedulableForever,  // can never run on this cluster
  kError,                 // plugin fault
};

struct PluginStatus {
  Code code = Code::kOk;
  const char* reason = "";   // static string: never allocated per call
  std::string_view plugin;   // stamped by the framework
  bool ok() const { return code == Code::kOk; }
  static PluginStatus Ok() { return {}; }
  static PluginStatus Unschedulable(const char* why) { return {Code::kUnschedulable, why, {}}; }
  static PluginStatus Never(const char* why) { return {Code::kUnschedulableForever, why, {}}; }
};

// "No job" for slot references (e.g. no GPU-sharing partner).
inline constexpr uint32_t kNoSlot = UINT32_MAX;

// Where a job's duration estimate comes from.
enum class EstimateSource : uint8_t {
  kNone = 0,   // no estimate: the policy has no estimator (the belief falls back, BelievedDuration)
  kEstimator,  // the policy's DurationEstimator at submit
  kOracle,     // an oracle estimator (reads the truth; simulator only)
  kReported,   // the job (or the resource manager) reported progress or an ETA
};

// Progress a job reported about itself (from its log, a metrics endpoint, the simulator's
// progress model): steps done of the total, and when.
struct Progress {
  int64_t steps_done = -1;   // -1 = never reported
  int64_t steps_total = -1;  // -1 = unknown
  Time at = kNoTime;
};

// The scheduler's view of one active (pending or running) job: only what a live scheduler
// could know (belief). The truth (true remaining work, when it really ends) is behind
// OracleView (oracle.h), supplied only by the simulator.
struct SchedJob {
  const JobRequest* job = nullptr;  // the request: no duration (the truth is OracleView's, oracle.h)
  VcId vc;                    // cluster VC it runs in
  GpuTypeMask types = 0;      // accepted GPU types, in the cluster's type ids (0 = any)
  uint32_t seq = 0;           // tie-break order among equal keys (trace order unless overridden)
  uint32_t slot = 0;          // its own slot (the key of OracleView lookups)
  Duration estimate = -1;     // estimated duration (estimator at submit, or updated), -1 = none
  EstimateSource est_source = EstimateSource::kNone;
  Time enqueued = 0;          // time it last entered the queue
  Time started = kNoTime;     // start of the current running segment
  Time est_end = 0;           // when the scheduler believes it ends (start + estimated remaining)
  int64_t key1 = 0, key2 = 0; // cached queue-sort key
  uint32_t preemptions = 0;
  uint16_t attempts = 0;      // runs started so far (the current one included)
  uint16_t failures = 0;      // attempts that ended in a failure
  Progress progress;
  Duration attained = 0;      // GPU-seconds of service received so far (until the current segment)
  int64_t policy_aux = 0;     // owned by the policy (Tiresias: attained service at the last promotion)
  Allocation alloc;
  bool running = false;
  // GPU sharing (SharePlugin): the running job this one shares its GPUs with, and whether
  // this job holds the GPUs in the ClusterState (the one that started first; ownership
  // passes to the partner when the owner finishes, so the GPUs stay taken until both end).
  bool owns_gpus = true;
  uint32_t partner = kNoSlot;
  // Staged jobs (Lucid's profiler): queued and run in a staging VC (`vc`) first, then
  // handed over to `home_vc`; invalid when the job is not (or no longer) staged.
  VcId home_vc;
};

struct SortKey {
  int64_t k1 = 0, k2 = 0;
};

// Read-only context for one cycle.
struct CycleContext {
  Time now = 0;
  const ClusterState* state = nullptr;
};

// One explained fact about a job (`orrery explain`): what was decided or observed, when,
// by which plugin, with named numeric fields for machine-readable output.
struct ExplainNote {
  Time t = 0;
  std::string plugin;   // e.g. "tiresias", "lucid-packing"
  std::string kind;     // short tag: "queue", "demoted", "promoted", "preempted", "packing", ...
  std::string text;     // one human-readable sentence
  std::vector<std::pair<std::string, double>> fields;
};

// Copies of the state that plugins of one policy share (e.g. Tiresias' Gittins table, read by
// its QueueSort and written by its Reschedule plugin): while one policy is copied (the
// predicted start's dry run, Scheduler::Forecast), each shared object is copied once and
// every plugin copy shares that copy.
class PluginCopies {
 public:
  template <class T>
  std::shared_ptr<T> Of(const std::shared_ptr<T>& original) {
    std::shared_ptr<void>& copy = copies_[original.get()];
    if (!copy) copy = std::make_shared<T>(*original);
    return std::static_pointer_cast<T>(copy);
  }

 private:
  std::unordered_map<const void*, std::shared_ptr<void>> copies_;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  // Explain hook: the plugin's view of job j's state at `now` (e.g. its queue and attained
  // service), appended to *out. Decisions as they happen are reported through
  // SchedulerHandle::Note while the job is watched. Default: nothing to say.
  virtual void Describe(const SchedJob& j, Time now, std::vector<ExplainNote>* out) const {}
};

class AdmitPlugin : public virtual Plugin {
 public:
  // Ok, or UnschedulableForever with the reason (the job is rejected, never lost).
  virtual PluginStatus Admit(const SchedJob& j, const ClusterState& state) = 0;
};

class QueueSortPlugin : public virtual Plugin {
 public:
  // Key computed when the job (re-)enters the queue; smaller runs first; ties by (seq).
  virtual SortKey Key(const SchedJob& j, Time now) = 0;
  // Whether the key reads true durations (SJF, SRTF): such runs are labelled "oracle", need
  // an OracleView (given through BindOracle before the first Key) and are refused live.
  virtual bool wants_oracle() const { return false; }
  virtual void BindOracle(const OracleView* oracle) {}
  // A copy with the same state (the predicted start's dry run), or null when the plugin's
  // state cannot be copied (no prediction is made then). Every extension point has this
  // hook; shared state goes through `copies`.
  virtual std::unique_ptr<QueueSortPlugin> Clone(PluginCopies& copies) const { return nullptr; }
};

class PlacePlugin : public virtual Plugin {
 public:
  // Chooses nodes/GPUs for j among the VC's nodes, avoiding `blocked` (VC-local indices;
  // may be null). On success fills *out and returns Ok; never mutates state.
  virtual PluginStatus Place(const SchedJob& j, const ClusterState& state, const NodeMask* blocked,
                             Allocation* out) = 0;
  // Whether Place's answer depends only on the job and the state and Place changes nothing of
  // its own (no random stream): a failed placement then fails again until the state changes.
  virtual bool pure() const { return false; }
  virtual std::unique_ptr<PlacePlugin> Clone(PluginCopies& copies) const { return nullptr; }  // as QueueSortPlugin's
};

}  // namespace orrery
