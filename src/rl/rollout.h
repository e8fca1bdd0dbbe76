// The rollout of one RL step with continuous batching: W data-parallel rollout workers (each
// `tp` GPUs) take contiguous shares of the sequences (samples of a prompt stay together), keep
// at most `max_running` of them in the running batch (the rest wait, first in first out), and
// run decode steps; each step's time comes from a StepTimer for the worker's running batch
// and mean context; a sequence leaves the batch when it has its sampled length, so the batch
// shrinks; a worker whose sequences are all done is idle until the rollout ends.
// docs/design/rl.md, "Rollout".
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/result.h"

namespace orrery::rl {

// Seconds of one engine step of a worker. `context` is the mean KV length of the batch.
class StepTimer {
 public:
  virtual ~StepTimer() = default;
  virtual double Decode(uint32_t batch, double context) const = 0;
  // Prefill of `batch` new sequences of `prompt` tokens each.
  virtual double Prefill(uint32_t batch, double prompt) const = 0;
  // One speculative step: the drafter's steps and the target's verify of `verify_tokens`
  // draft tokens per sequence.
  virtual double Speculative(uint32_t batch, double context, uint32_t verify_tokens) const = 0;
};

// A timer from functions, for tests and callers with their own step model.
class FnTimer final : public StepTimer {
 public:
  using DecodeFn = std::function<double(uint32_t batch, double context)>;
  using SpecFn = std::function<double(uint32_t batch, double context, uint32_t verify_tokens)>;
  FnTimer(DecodeFn decode, DecodeFn prefill, SpecFn spec)
      : decode_(std::move(decode)), prefill_(std::move(prefill)), spec_(std::move(spec)) {}
  double Decode(uint32_t b, double c) const override { return decode_(b, c); }
  double Prefill(uint32_t b, double p) const override { return prefill_ ? prefill_(b, p) : 0.0; }
  double Speculative(uint32_t b, double c, uint32_t k) const override { return spec_ ? spec_(b, c, k) : 0.0; }

 private:
  DecodeFn decode_, prefill_;
  SpecFn spec_;
};

// Speculative decoding of the tail: on while the running batch is at most `max_batch`; the
// draft budget (verify tokens) of a batch is that of the last bucket whose lower bound it
// reaches; each speculative step advances every sequence by `accept[i]` tokens on average.
struct SpecConfig {
  bool on = false;
  uint32_t max_batch = 32;
  std::vector<uint32_t> bucket_lo = {1, 2, 5, 21};
  std::vector<uint32_t> verify_tokens = {48, 32, 16, 8};
  std::vector<double> accept = {1, 1, 1, 1};  // tokens per step (accepted + the bonus token)
};

struct Sequence {
  uint32_t prompt = 0;    // prompt tokens
  uint32_t response = 0;  // sampled response length
  uint32_t done = 0;      // tokens already generated (a continued partial response)
  uint32_t group = 0;     // the prompt it samples (groups complete when all their samples do)
};

struct RolloutConfig {
  uint32_t workers = 1;
  uint32_t tp = 1;            // GPUs per worker
  uint32_t max_running = 1;   // running-batch cap per worker (engine limit and KV capacity)
  SpecConfig spec;
  uint32_t stop_after_groups = 0;  // 0: run every sequence; else stop when this many groups are complete
};

// [t0, t1) with `busy_gpus` GPUs of the rollout decoding.
struct BusySegment {
  double t0 = 0, t1 = 0;
  uint32_t busy_gpus = 0;
};

struct RolloutResult {
  double time_s = 0;
  std::vector<double> worker_busy_s;  // per worker: from 0 to its last step
  std::vector<BusySegment> timeline;  // piecewise constant, from 0 to time_s
  std::vector<double> generated;      // per sequence: tokens at the end (≤ response)
  std::vector<bool> finished;         // per sequence
  std::vector<uint32_t> complete_groups;  // in completion order
  std::vector<double> group_done_s;       // when each of complete_groups completed
  uint64_t steps = 0;                 // engine steps over all workers
  uint64_t spec_steps = 0;            // of them speculative
  double idle_gpu_s = 0;              // Σ tp · (time_s − busy)
  double tail_s = 0;                  // time with at least one idle worker: time_s − min busy
};

// Errors on an empty configuration (no workers, tp 0, max_running 0) or malformed spec tables.
Result<RolloutResult> SimulateRollout(const std::vector<Sequence>& seqs, const RolloutConfig& cfg,
                                      const StepTimer& timer);

// The timeline of workers of `tp` GPUs busy from 0 to busy[i], up to `end`.
std::vector<BusySegment> BusyTimeline(const std::vector<double>& busy, uint32_t tp, double end);

}  // namespace orrery::rl
