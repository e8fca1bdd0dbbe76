#include "live/live_policy.h"

#include "sched/plugins/policies.h"

namespace orrery::live {

Result<PolicyParts> MakeLivePolicy(const std::string& spec, uint64_t seed) {
  ORR_ASSIGN_OR_RETURN(PolicyParts p, MakePolicy(spec, seed, nullptr));
  if (p.share)
    return MakeError("GPU-sharing policies (" + spec + ") are not supported by orrery serve yet");
  // Oracle policies and Lucid's profiler stage: the core's rule (CheckLiveSupport).
  ORR_RETURN_IF_ERROR(CheckLiveSupport(p));
  return p;
}

Status CheckLivePolicy(const std::string& spec, uint64_t seed) {
  auto p = MakeLivePolicy(spec, seed);
  if (!p.ok()) return p.error();
  return Status::Ok();
}

}  // namespace orrery::live
