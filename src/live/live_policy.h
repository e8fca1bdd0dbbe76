// Which policies live mode runs, and the one place that builds them for the daemon.
// Refused, with a message naming the reason: GPU-sharing policies (a share of a GPU is not
// expressible with ReqNodeList/--gres=gpu), policies with a staging stage that only the
// simulator has (Lucid's profiler), and oracle policies (they read the true remaining work,
// which no live scheduler knows).
#pragma once

#include <string>

#include "base/result.h"
#include "sched/framework/scheduler.h"

namespace orrery::live {

// Builds `spec` as live mode runs it, or the reason live mode refuses it.
Result<PolicyParts> MakeLivePolicy(const std::string& spec, uint64_t seed);
// The same check without keeping the policy (config validation).
Status CheckLivePolicy(const std::string& spec, uint64_t seed);

}  // namespace orrery::live
