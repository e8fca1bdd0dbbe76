#include "logs/lines.h"

namespace orrery::logs {

std::string_view CleanLine(std::string_view line, std::string* scratch) {
  if (line.find('\x1b') == std::string_view::npos) return line;
  scratch->clear();
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c != '\x1b') {
      scratch->push_back(c);
      ++i;
      continue;
    }
    ++i;
    if (i < line.size() && line[i] == '[') {  // CSI: parameters, then one final byte @..~
      ++i;
      while (i < line.size() && !(line[i] >= '@' && line[i] <= '~')) ++i;
      if (i < line.size()) ++i;
    } else if (i < line.size() && line[i] == ']') {  // OSC: up to BEL or ESC backslash
      while (i < line.size() && line[i] != '\x07' && line[i] != '\x1b') ++i;
      if (i < line.size()) ++i;
    } else if (i < line.size()) {
      ++i;  // two-byte escape
    }
  }
  return *scratch;
}

}  // namespace orrery::logs
