#include <string>

#include "cli/commands.h"

namespace orrery::cli {

void SetExamples(CLI::App* cmd, std::initializer_list<std::string_view> examples,
                 std::initializer_list<std::string_view> slurm_examples) {
  std::string f = "\nExamples (run from the repository root):\n";
  auto line = [&f](std::string_view e, std::string_view mark) {
    f += "  ";
    f += e;
    f += mark;
    f += '\n';
  };
  for (std::string_view e : examples) line(e, "");
  for (std::string_view e : slurm_examples) line(e, kNeedsSlurm);
  cmd->footer(f);
}

}  // namespace orrery::cli
