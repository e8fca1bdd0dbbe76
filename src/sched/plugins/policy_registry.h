// The policy registry: every policy `--policy` and `[policy]` accept, with its factory, its
// options schema and whether `orrery serve` can run it, declared once (the table is in
// policies.cc). The CLI's policy help, `orrery simulate --list-policies` and
// docs/policies.md are generated from it; a test keeps docs/policies.md equal to it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sched/framework/api/policy_parts.h"
#include "sched/plugins/spec_args.h"

namespace orrery {

struct PolicyEnv;

// Whether `orrery serve` can run a policy (a closed set).
enum class LiveSupport : uint8_t {
  kLive,           // every setting
  kSomeSettings,   // the settings named in live_note (CheckLiveSupport refuses the others)
  kSimulatorOnly,  // never: live_note says why
};
std::string_view LiveSupportName(LiveSupport s);

// What a factory is handed besides the parsed spec.
struct PolicyBuild {
  uint64_t seed = 0;
  PolicyEnv* env = nullptr;
};

struct PolicyInfo {
  std::string_view name;
  std::string_view summary;  // one line
  LiveSupport live;
  std::string_view live_note;  // for kSomeSettings and kSimulatorOnly
  OptionSchema options;        // its own keys; they override a common key of the same name
  // Sets the parts the policy owns (sort, estimator, post, reschedule, share, blocking, ...).
  Status (*build)(const SpecArgs& args, PolicyBuild& b, PolicyParts* parts);
};

// Every registered policy, in listing order.
const std::vector<PolicyInfo>& Policies();
// The options every policy takes (backfill, blocking, eval_share, shape, elastic, ...).
OptionSchema CommonPolicyOptions();
// The entry named `name`, or null.
const PolicyInfo* FindPolicy(std::string_view name);
// "fifo, sjf, ..." in registry order.
std::string PolicyNameList();
// The registry as Markdown: what docs/policies.md holds and `--list-policies` prints.
std::string PolicyListMarkdown();

}  // namespace orrery
