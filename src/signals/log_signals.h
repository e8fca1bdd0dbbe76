// Semantic signals for simulated trace jobs (docs/design/signals.md).
//
// Each job's launch config is the advisor's seeded payload (semantic/payload.h): the same
// model, steps and step time the `semantic` estimator reads at submit. While an attempt
// runs, LogSignals writes the job's training log as Megatron-LM prints it — one
// `iteration N/TOTAL | ... elapsed time per iteration (ms): X | ... lm loss: L |` line every
// `log_every` steps, the printed time jittered around the true step time — at the steps the
// truth has reached, and reads it back with the real metric tracker (logs::ProgressTracker),
// whose reading (step, total, ETA) is what the simulator hands to the policy. A read sees
// only the newest `max_lines` lines written since the last one (a bounded tail, as the live
// daemon reads). Deterministic per (seed, job, attempt).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/rng.h"
#include "logs/progress.h"
#include "model/trace.h"
#include "sim/signals.h"

namespace orrery::signals {

struct LogSignalOptions {
  Duration interval = 600;   // s between two reads of a running job's log
  double jitter = 0.05;      // log-normal sigma of a printed interval's mean step time
  uint32_t max_lines = 8;    // newest lines a read sees at most (bounded tail)
  double min_line_s = 10;    // log every k steps: the smallest k of 1, 2, 5, 10, 20, 50, ... with k × step ≥ this
};

// "interval=600,jitter=0.05,max_lines=8,min_line_s=10" (any subset; "" = defaults); errors name
// the key and the expected value.
Result<LogSignalOptions> ParseLogSignalOptions(const std::string& spec);

// The truth behind a job's log: planned steps, seconds per step, start-up before step 1.
struct LogTruth {
  int64_t steps = 1;
  double step_s = 1;
  double startup_s = 0;
  int64_t log_every = 1;
  // Steps done after `done_s` seconds of the job's work.
  int64_t StepsAt(double done_s) const;
};
LogTruth TruthOf(const Job& job, uint64_t seed, const LogSignalOptions& o);

class LogSignals final : public JobSignals {
 public:
  LogSignals(uint64_t seed, LogSignalOptions o) : seed_(seed), o_(o) {}

  Duration Interval() const override { return o_.interval; }
  void AttemptStarted(uint32_t job, const Job& j, uint16_t attempt, Time now, Duration done_s) override;
  SignalReading Read(uint32_t job, Time now, Duration done_s) override;
  void AttemptEnded(uint32_t job) override { runs_.erase(job); }

  uint64_t lines_written() const { return lines_; }
  uint64_t bytes_written() const { return bytes_; }

 private:
  struct Run {  // one attempt's log
    LogTruth truth;
    Rng rng;
    logs::ProgressTracker tracker;
    int64_t printed = 0;  // last step a line was written for
  };
  std::string Line(const Run& run, int64_t step, double ms, Time now) const;

  uint64_t seed_;
  LogSignalOptions o_;
  std::unordered_map<uint32_t, std::unique_ptr<Run>> runs_;
  uint64_t lines_ = 0, bytes_ = 0;
  std::string buf_;
  std::vector<int64_t> steps_;  // a read's line steps (reused)
};

}  // namespace orrery::signals
