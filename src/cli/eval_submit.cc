#include "cli/eval_submit.h"

namespace orrery::cli {

void RegisterEvalSubmit(CLI::App* eval, int* exit_code) {}

}  // namespace orrery::cli
