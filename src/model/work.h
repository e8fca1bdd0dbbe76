// What a job has to do, as the simulator's truth and the planner see it: one or more
// phases, each a number of steps with its own demand and checkpoint policy. Plain values.
//
// A trace job (one duration, no internals) is exactly one generic phase of `duration`
// steps at one step per second, checkpointed only when preempted (the restart overhead
// is then the policy's, PolicyParts::preempt_overhead): every output of a run on trace
// jobs is the same as before phases existed (docs/design/job-model.md).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "model/job.h"

namespace orrery {

enum class PhaseKind : uint8_t {
  kGeneric = 0,  // a trace job: work in seconds, nothing known inside
  kTrain,        // (pre-)training or fine-tuning steps
  kEvalTrial,    // one evaluation / hyper-parameter trial
  kRollout,      // RL rollout (generation) steps
  kInference,    // batch inference
  kLoad,         // a checkpoint read onto the GPUs (Phase::load): its wall time is the simulator's
                 // storage model's (shared storage bandwidth, node caches); `steps` = its
                 // seconds alone at the node's link, which the oracle knows
  kMetric,       // an evaluation metric (answer matching, code execution, judge model)
};
inline constexpr int kNumPhaseKinds = 7;
// "generic", "train", "eval_trial", "rollout", "inference", "load", "metric"
std::string_view PhaseKindName(PhaseKind k);

// What one phase asks for (the same fields as the Job's request).
struct Demand {
  uint32_t gpus = 0;
  uint16_t gpu_milli = 1000;
  uint16_t nodes = 0;          // 0 = placer decides
  uint32_t cpu_milli = 0;
  uint32_t mem_mib = 0;
  GpuTypeMask gpu_types = 0;
  friend bool operator==(const Demand&, const Demand&) = default;
};

// When a phase writes a durable checkpoint and what that costs. Periodic checkpoints are
// taken every `every_steps` steps and/or every `every_seconds` seconds of running (the
// first reached); each stalls the job `cost` seconds. A restart restores the last durable
// checkpoint in `restore` seconds and redoes the steps after it. `on_preempt`: a
// preemption is announced and the job checkpoints before it stops (trace jobs: the policy's
// overhead is charged at restart instead of `restore`, and no step is lost).
struct CheckpointPolicy {
  int64_t every_steps = 0;     // 0 = not by steps
  Duration every_seconds = 0;  // 0 = not by time
  Duration cost = 0;           // s to write one periodic checkpoint
  Duration restore = 0;        // s to restore at the start of a restarted attempt
  bool on_preempt = true;
  // Whether the phase's end is durable (a restart resumes after it). False for the phases of
  // an evaluation trial: the loaded model and its partial predictions live in GPU memory, so a
  // stopped trial starts over from its first phase (with on_preempt = false).
  bool durable_at_end = true;
  bool periodic() const { return every_steps > 0 || every_seconds > 0; }
};

// The transformer a training phase trains, for a planner-aware progress model
// (docs/design/planner.md, "Scheduler integration"): a GPT-style decoder and one step's
// batch. layers == 0: not described (the phase runs at its seconds_per_step wherever it
// is placed).
struct TrainModel {
  int32_t layers = 0, hidden = 0, heads = 0, vocab = 32000;
  int32_t seq = 2048;          // tokens per sequence
  int32_t global_batch = 0;    // sequences per optimizer step
  bool described() const { return layers > 0; }
  friend bool operator==(const TrainModel&, const TrainModel&) = default;
};

// What a kLoad phase reads: `bytes` of checkpoint `checkpoint` (an id shared by the trials
// of one evaluation request). cacheable: the first read of that checkpoint on a node fills
// the node's cache and later reads there come from it (Acme's per-node preload).
struct LoadSpec {
  double bytes = 0;
  uint32_t checkpoint = 0;
  bool cacheable = false;
};

struct Phase {
  PhaseKind kind = PhaseKind::kGeneric;
  int64_t steps = 0;              // work of the phase
  double seconds_per_step = 1.0;  // at the requested demand, alone on its GPUs
  Demand demand;
  CheckpointPolicy checkpoint;
  TrainModel model;  // kTrain phases may describe their model (else not described)
  LoadSpec load;     // kLoad phases
};

// The work of one job: its phases in order (never empty for a simulated job).
struct WorkSpec {
  std::vector<Phase> phases;
  int64_t total_steps() const;
};

// The request a job makes (Job's request fields).
Demand DemandOf(const Job& j);
// A trace job's work: one generic phase of `duration` steps at 1 step/s, checkpoint on
// preemption only. Precondition: j.duration >= 0.
WorkSpec TraceWork(const Job& j);

}  // namespace orrery
