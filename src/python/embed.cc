#include "python/embed.h"

#include <mutex>

#include <pybind11/embed.h>

#include "python/bridge.h"

namespace py = pybind11;

// The job view type for policies run by the CLI (the module defines its own, module-local).
PYBIND11_EMBEDDED_MODULE(_orrery_embedded, m) { orrery::python::BindViews(m); }

namespace orrery::python {

void InstallEmbeddedPython() {
  SetPythonPolicyFactory([](const std::string& spec, uint64_t seed, PolicyEnv* env) -> Result<PolicyParts> {
    static std::once_flag once;
    std::call_once(once, [] {
      py::initialize_interpreter();
      py::module_::import("_orrery_embedded");
      PyEval_SaveThread();  // runs take the GIL for each call into Python
    });
    return PolicyFromSpec(spec, seed, env);
  });
}

}  // namespace orrery::python
