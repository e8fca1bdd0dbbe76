// Python policies in the CLI (`orrery simulate --policy py:module.Class`): installs the
// factory of `py:` specs, which starts an embedded interpreter the first time one is asked
// for (a run without Python policies never starts it). Only in builds with ORRERY_PYTHON.
#pragma once

namespace orrery::python {

void InstallEmbeddedPython();

}  // namespace orrery::python
