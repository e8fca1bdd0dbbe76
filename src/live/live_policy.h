// Which policies live mode runs, and the one place that builds them for the daemon.
// Refused, with a message naming the reason: GPU-sharing policies (a share of a GPU is not
// expressible with ReqNodeList/--gres=gpu), and what the core refuses live
// (CheckLiveSupport: oracle policies such as sjf/srtf and oracle estimators, which read
// true durations no live scheduler knows; Lucid's profiler stage, which only the simulator
// models).
#pragma once

#include <string>

#include "base/result.h"
#include "sched/framework/scheduler.h"
#include "semantic/semantic_estimator.h"

namespace orrery::live {

// Builds `spec` as live mode runs it, or the reason live mode refuses it. `launch_schemas` (the
// advisor: each job's batch script as read) is what the `semantic` estimator reads; a policy whose
// estimator is `semantic` needs it, and with it the policy's estimator must be `semantic`
// (one source of the estimate).
Result<PolicyParts> MakeLivePolicy(const std::string& spec, uint64_t seed, semantic::SchemaSource launch_schemas = {});
// The same check without keeping the policy (config validation); `advisor`: launch files
// will be given.
Status CheckLivePolicy(const std::string& spec, uint64_t seed, bool advisor = false);

}  // namespace orrery::live
