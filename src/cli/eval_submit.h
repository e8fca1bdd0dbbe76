// `orrery eval submit` and `orrery eval record`: a plan on a real Slurm (docs/design/eval.md).
#pragma once

#include <CLI/CLI.hpp>

namespace orrery::cli {

void RegisterEvalSubmit(CLI::App* eval, int* exit_code);

}  // namespace orrery::cli
