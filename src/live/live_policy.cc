#include "live/live_policy.h"

#include "sched/plugins/policies.h"

namespace orrery::live {

Result<PolicyParts> MakeLivePolicy(const std::string& spec, uint64_t seed) {
  ORR_ASSIGN_OR_RETURN(PolicyParts p, MakePolicy(spec, seed, nullptr));
  if (p.share)
    return MakeError("GPU-sharing policies (" + spec + ") are not supported by orrery serve yet");
  if (p.profiler.enabled)
    return MakeError("policy '" + spec +
                     "' runs jobs through a profiling stage (Lucid's profiler), which only the simulator has; "
                     "orrery serve refuses it (use the policy without the profiler)");
  return p;
}

Status CheckLivePolicy(const std::string& spec, uint64_t seed) {
  auto p = MakeLivePolicy(spec, seed);
  if (!p.ok()) return p.error();
  return Status::Ok();
}

}  // namespace orrery::live
