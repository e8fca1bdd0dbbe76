// Policies: a policy is a named assembly of plugins at the framework's extension points,
// built from a spec "name[:key=value,...]" whose keys are checked against the policy's
// options schema. Which policies exist, their options and defaults, and whether orrery serve
// runs them: the registry (policy_registry.h; the table is in policies.cc), listed by
// `orrery simulate --list-policies` and in docs/policies.md.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "model/cluster.h"
#include "model/trace.h"
#include "sched/framework/api/policy_parts.h"
#include "sched/plugins/planner_shape.h"
#include "sched/plugins/spec_args.h"

namespace orrery {

// What a policy may need from its run beyond the spec. `trace` (may be null): job names and
// users for learning estimators (history, user-stats, xgboost, blend), phases (work) and
// requests for shape=goodput. `cluster` (may be null): the GPU types whose planner profiles
// shape=goodput reads. `planner`: the cost model shared with the simulator's progress model;
// MakePolicy sets it (PlannerCostFor(cluster)) when the spec shapes jobs and it is null.
// `shape_info` (live mode: no trace): each job's model and declared GPU bounds for
// shape=goodput instead of the trace's phases (elastic=true then builds a plugin that
// CheckLiveSupport refuses).
struct PolicyEnv {
  const Trace* trace = nullptr;
  const Cluster* cluster = nullptr;
  std::shared_ptr<const PlannerCost> planner;
  ShapeInfoFn shape_info;
};

Result<PolicyParts> MakePolicyFor(const std::string& spec, uint64_t seed, PolicyEnv* env);

// Policies written in Python (`py:module.Class`, docs/python.md): built by the factory that a
// driver embedding Python installs (the `orrery` Python module; the CLI built with
// ORRERY_PYTHON). Without one, MakePolicyFor refuses `py:` specs and says why.
inline constexpr std::string_view kPythonPolicyPrefix = "py:";
using ExternalPolicyFactory = std::function<Result<PolicyParts>(const std::string& spec, uint64_t seed, PolicyEnv* env)>;
// Installs (or, with an empty function, removes) the factory of `py:` specs; call it before
// any simulation starts.
void SetPythonPolicyFactory(ExternalPolicyFactory f);
// MakePolicyFor with only a trace (no shaping).
Result<PolicyParts> MakePolicy(const std::string& spec, uint64_t seed, const Trace* trace = nullptr);
// The registered policies' names, in registry order.
std::vector<std::string> PolicyNames();

}  // namespace orrery
