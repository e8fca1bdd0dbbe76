#include <string>

#include "cli/commands.h"

namespace orrery::cli {

void SetExamples(CLI::App* cmd, std::initializer_list<std::string_view> examples) {
  std::string f = "\nExamples (run from the repository root):\n";
  for (std::string_view e : examples) {
    f += "  ";
    f += e;
    f += '\n';
  }
  cmd->footer(f);
}

}  // namespace orrery::cli
