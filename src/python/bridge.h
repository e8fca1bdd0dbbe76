// Python policies (docs/python.md, docs/design/python.md): an `orrery.Policy` subclass runs as
// the QueueSort plugin of a policy. Its `priority(job, now)` is called once each time a job
// enters the queue (at submit and after a requeue), as the built-in orders' keys are; the
// job it sees is a JobView, which shows only what a live scheduler knows. A Python exception
// is kept as the policy's fault (PolicyParts::fault): no further call is made and the run
// ends with it as its error.
#pragma once

#include <cstdint>
#include <string>

#include <pybind11/pybind11.h>

#include "base/result.h"
#include "sched/plugins/policies.h"

namespace orrery::python {

// The parts of a policy whose order is the Python object `policy`'s (an orrery.Policy).
// Reads its attributes `estimator` (a duration estimator spec, "" = none) and `blocking`.
// Call with the GIL held.
Result<PolicyParts> PolicyFromObject(pybind11::object policy, const std::string& spec, uint64_t seed,
                                     PolicyEnv* env);

// "py:module.Class": imports `module` (the working directory first on sys.path) and builds
// the policy from Class(). Call with the GIL held.
Result<PolicyParts> PolicyFromSpec(const std::string& spec, uint64_t seed, PolicyEnv* env);

// The located message of the Python exception being handled ("ValueError: ..." and the
// innermost frame of the policy's code).
std::string DescribePythonError(pybind11::error_already_set& e);

// Adds the JobView class to `m` (module-local: the CLI's embedded interpreter and the
// module may both define it).
void BindViews(pybind11::module_& m);

}  // namespace orrery::python
