// A pending job's predicted start ("when will it run, and why not now"), as the scheduler's
// dry run of its own policy answers it (Scheduler::Forecast). Part of the core's contract.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/time.h"
#include "sched/framework/api/plugin.h"

namespace orrery {

// What a predicted start says (a closed set; PredictionKindName gives the API's word).
enum class PredictionKind : uint8_t {
  kRunning,          // it runs: `at` is the start of its current attempt
  kPredicted,        // the dry run of the policy starts it at `at`
  kBeyondHorizon,    // the dry run reached SchedulerOptions::predict_horizon first: no time
  kNever,            // in the dry run nothing more happens (no end, tick or wake-up left) while it waits
  kOraclePolicy,     // no prediction: the policy reads the truth, which beliefs cannot replay
  kNotCopyable,      // no prediction: a plugin of the policy cannot copy its state (Clone)
  kUnknownJob,       // the slot holds no active job
};
std::string_view PredictionKindName(PredictionKind k);

// "When will it run, and why not now": a pending job's predicted start from the policy's
// own view -- a dry run of the policy itself on a copy of the scheduler (Scheduler::Forecast).
struct StartPrediction {
  Time at = kNoTime;        // kPredicted and kRunning only
  PredictionKind kind = PredictionKind::kUnknownJob;
  uint32_t ahead = 0;       // pending jobs ahead of it in the policy's order in its VC
  PluginStatus why;         // why it is not running now (the VC's last blocking reason)
  std::string_view blocker; // kNotCopyable / kOraclePolicy: the plugin that says so
};
// One sentence for people (`orrery explain`): the time, or why there is none.
std::string DescribePrediction(const StartPrediction& p);

}  // namespace orrery
