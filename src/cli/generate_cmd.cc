#include "cli/commands.h"

namespace orrery::cli {

void RegisterGenerate(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("generate", "(not yet implemented)");
  cmd->callback([exit_code] { *exit_code = 1; });
}

}  // namespace orrery::cli
