#include "live/live_policy.h"

#include "sched/plugins/policies.h"
#include "sched/plugins/policy_registry.h"

namespace orrery::live {

namespace {

// "fifo, srtf (some settings), ..." : the policies the registry declares live-capable.
std::string LivePolicyList() {
  std::string s;
  for (const PolicyInfo& p : Policies()) {
    if (p.live == LiveSupport::kSimulatorOnly) continue;
    s += (s.empty() ? "" : ", ") + std::string(p.name);
    if (p.live == LiveSupport::kSomeSettings) s += " (" + std::string(p.live_note) + ")";
  }
  return s;
}

}  // namespace

Result<PolicyParts> MakeLivePolicy(const std::string& spec, uint64_t seed, semantic::SchemaSource launch_schemas,
                                   const LiveShape& shape) {
  // The registry says which policies orrery serve runs; CheckLiveSupport, which settings.
  const PolicyInfo* info = FindPolicy(spec.substr(0, spec.find(':')));
  if (info != nullptr && info->live == LiveSupport::kSimulatorOnly)
    return MakeError("policy '" + spec + "': runs in orrery simulate only (" + std::string(info->live_note) +
                     "); orrery serve runs " + LivePolicyList());
  PolicyEnv env;
  env.cluster = shape.cluster;
  env.shape_info = shape.info ? shape.info : [](const JobRequest&) { return ShapeInfo{}; };
  ORR_ASSIGN_OR_RETURN(PolicyParts p, MakePolicyFor(spec, seed, &env));
  if (p.share)
    return MakeError("GPU-sharing policies (" + spec + ") are not supported by orrery serve yet");
  // Oracle policies, Lucid's profiler stage, elastic resizes: the core's rule (CheckLiveSupport).
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

Status CheckLivePolicy(const std::string& spec, uint64_t seed, bool advisor, const std::string& gpu_type) {
  semantic::SchemaSource schemas;
  if (advisor) schemas = [](const Job&) { return std::optional<semantic::LaunchSchema>(); };
  Cluster cluster;  // no nodes: the GPU type's planner profile is all a shaping policy reads here
  SetGpuType(&cluster, gpu_type);
  auto p = MakeLivePolicy(spec, seed, std::move(schemas), LiveShape{&cluster, {}});
  if (!p.ok()) return p.error();
  if (p->shape && gpu_type.empty())
    return MakeError("policy '" + spec + "': shape=goodput times jobs with the planner: set [policy] gpu_type to the "
                     "managed nodes' GPU type (e.g. \"H200\"; `orrery plan` names the known ones)");
  return Status::Ok();
}

void SetGpuType(Cluster* cluster, const std::string& gpu_type) {
  if (gpu_type.empty()) return;
  const GpuTypeId t(static_cast<uint8_t>(cluster->gpu_types.Intern(gpu_type)));
  for (Node& n : cluster->nodes) n.gpu_type = t;
}

}  // namespace orrery::live
