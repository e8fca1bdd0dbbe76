#include "cli/commands.h"

#include <fmt/core.h>

namespace orrery::cli {

int Fail(std::string_view command, const Error& e) {
  fmt::print(stderr, "orrery {}: {}\n", command, e.message);
  return e.exit_code;
}

}  // namespace orrery::cli
