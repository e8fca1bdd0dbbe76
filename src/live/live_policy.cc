#include "live/live_policy.h"

#include "sched/plugins/policies.h"

namespace orrery::live {

Result<PolicyParts> MakeLivePolicy(const std::string& spec, uint64_t seed, semantic::SchemaSource launch_schemas) {
  ORR_ASSIGN_OR_RETURN(PolicyParts p, MakePolicy(spec, seed, nullptr));
  if (p.share)
    return MakeError("GPU-sharing policies (" + spec + ") are not supported by orrery serve yet");
  // Oracle policies and Lucid's profiler stage: the core's rule (CheckLiveSupport).
  ORR_RETURN_IF_ERROR(CheckLiveSupport(p));
  auto* advisor = dynamic_cast<semantic::SemanticEstimator*>(p.estimator.get());
  if (advisor && !launch_schemas)
    return MakeError("policy '" + spec + "': estimator 'semantic' reads each job's batch script: set [signals] advisor = true");
  if (!advisor && launch_schemas)
    return MakeError("[signals] advisor = true: the advisor's estimate reaches the policy as its estimator; use a policy "
                     "that reads one with estimator=semantic (e.g. srtf:estimator=semantic, qssf:estimator=semantic, "
                     "easy:estimator=semantic), got '" + spec + "'");
  if (advisor) advisor->SetSchemas(std::move(launch_schemas));
  return p;
}

Status CheckLivePolicy(const std::string& spec, uint64_t seed, bool advisor) {
  semantic::SchemaSource schemas;
  if (advisor) schemas = [](const Job&) { return std::optional<semantic::LaunchSchema>(); };
  auto p = MakeLivePolicy(spec, seed, std::move(schemas));
  if (!p.ok()) return p.error();
  return Status::Ok();
}

}  // namespace orrery::live
