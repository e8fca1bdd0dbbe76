// `orrery plan search` (placeholder until plan/search lands in this branch).
#include "cli/commands.h"

namespace orrery::cli {

void RegisterPlanSearch(CLI::App& plan, int* exit_code) { (void)plan; (void)exit_code; }

}  // namespace orrery::cli
