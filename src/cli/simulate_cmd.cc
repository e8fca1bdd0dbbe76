#include "cli/commands.h"

namespace orrery::cli {

void RegisterSimulate(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("simulate", "(not yet implemented)");
  cmd->callback([exit_code] { *exit_code = 1; });
}

}  // namespace orrery::cli
