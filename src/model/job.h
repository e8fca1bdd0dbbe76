// A job as recorded in a trace: what was asked for, and (when the trace says) what
// happened. Plain value, no I/O. Units: seconds, milli-CPUs, MiB, GPUs.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/ids.h"
#include "base/time.h"

namespace orrery {

// Final state recorded by the source system.
enum class JobState : uint8_t {
  kUnknown = 0,   // trace has no outcome column
  kCompleted,     // exited successfully
  kFailed,        // non-zero exit or error
  kCancelled,     // cancelled by user/admin (after or before starting)
  kTimeout,       // hit its walltime limit
  kNodeFail,      // killed by an infrastructure failure
  kRunning,       // still running when the trace was cut (censored)
  kPending,       // never started before leaving the system / the trace end
  kPreempted,     // preempted and not resumed within the trace
};
inline constexpr int kNumJobStates = 9;

std::string_view JobStateName(JobState s);             // "COMPLETED", ...
bool ParseJobState(std::string_view s, JobState* out);  // accepts the names above (case-insensitive)

// What the job is for, where the trace or the generator says (Acme's job types): the
// evaluation-job reservation (`eval_share`, sched/framework/api/reserve.h) and the simulator's
// per-kind queueing delays read it. kUnknown for traces without job types.
enum class JobKind : uint8_t {
  kUnknown = 0,
  kPretrain,  // (pre-)training of a foundation model
  kFinetune,  // SFT, RLHF, multimodal fine-tuning
  kEval,      // an evaluation job: a trial on GPUs or its metric computation on CPUs
  kDebug,     // debugging / tests
  kOther,
};
inline constexpr int kNumJobKinds = 6;
std::string_view JobKindName(JobKind k);  // "unknown", "pretrain", "finetune", "eval", "debug", "other"
// Acme's job types (AcmeTrace `type` column and the acme-* generator classes; case-insensitive):
// Pretrain -> kPretrain, SFT and MLLM -> kFinetune, Eval -> kEval, Debug -> kDebug, Other ->
// kOther; anything else kUnknown.
JobKind AcmeJobKind(std::string_view type);

// Bit set of accepted GPU models (bit i = GpuTypeId i of the owning trace/cluster).
// 0 means "any type".
using GpuTypeMask = uint32_t;

// What was asked for: everything a live scheduler knows of a job when it arrives. The
// scheduler's plugins see a job only through this type (SchedJob::job), so the trace's
// recorded outcome -- its true duration above all -- cannot be read by a policy: it is in
// Job, and the simulator's truth reaches the core only through OracleView.
struct JobRequest {
  Time submit = 0;       // seconds since Trace::epoch_unix
  Duration walltime = -1;  // requested time limit in seconds; -1 = none
  JobId id;              // dense index in the Trace (0..n-1); ordering key for ties
  UserId user;           // interned user (invalid = unknown)
  NameId name;           // interned job name (invalid = unknown)
  uint32_t gpus = 0;     // GPUs requested (whole devices; 1 for a fractional job)
  uint32_t cpu_milli = 0;     // CPU request in milli-cores (0 = unknown)
  uint32_t mem_mib = 0;       // memory request in MiB (0 = unknown)
  GpuTypeMask gpu_types = 0;  // accepted GPU models (0 = any)
  VcId vc;               // virtual cluster / partition / queue (invalid = none)
  uint16_t gpu_milli = 1000;  // share of each GPU in thousandths (1000 = whole GPU)
  uint16_t nodes = 0;    // node count requested (0 = unspecified, placer decides)
  JobKind kind = JobKind::kUnknown;  // the job's type when the trace names one (Acme); known at submit

  // GPU demand in milli-GPUs (gpus * gpu_milli).
  uint64_t gpu_milli_total() const { return static_cast<uint64_t>(gpus) * gpu_milli; }
  bool is_fractional() const { return gpus == 1 && gpu_milli < 1000; }
};

// A job as a trace records it: the request and what happened (the truth of a replay).
struct Job : JobRequest {
  JobState state = JobState::kUnknown;
  Duration duration = -1;  // run time in seconds as recorded (service demand); -1 = unknown
  Time start = kNoTime;  // recorded start (kNoTime = unknown / never started)
  Time end = kNoTime;    // recorded end

  Duration queue_delay() const { return (start == kNoTime) ? -1 : start - submit; }
};
static_assert(sizeof(Job) == 80, "the request's tail padding holds `state`: a Job stays 80 bytes");

}  // namespace orrery
