// A POSIX shell reader for launch scripts: it tokenizes with the shell's quoting rules
// (single and double quotes, backslashes, line continuations, comments, here-documents),
// keeps variable assignments (scalars and bash arrays) and expands words the way the
// shell would ($VAR, ${VAR}, ${VAR:-default} and the other default/alternative forms,
// ${ARR[@]}, ${#VAR}, $((arithmetic)), field splitting of unquoted expansions). It never
// runs anything: command substitution ($(...), `...`) expands to nothing and marks the
// word unresolved, exactly what wordexp(3) with WRDE_NOCMD refuses to do. Control flow
// is not evaluated: every assignment is applied in text order (the last one wins), which
// is what a reader of an example script does.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "semantic/located_text.h"
#include "semantic/schema.h"

namespace orrery::semantic {

// Stands in the text of an expanded word for something unknown before the run (an unset
// variable, $1, $(cmd)); readers strip it with StripUnresolved().
inline constexpr char kUnresolvedMark = '\x01';
std::string StripUnresolved(std::string_view s);

struct ShellWord {
  LocText text;
  bool unresolved = false;  // an unknown variable, positional parameter or command substitution took part
};

struct ShellCommand {
  std::vector<ShellWord> words;  // expanded; assignments that prefix the command are not included
  Loc loc;                       // where the command starts
};

struct ShellVar {
  std::vector<ShellWord> items;  // one item for a scalar
  bool is_array = false;
  Loc loc;  // where it was (last) assigned
};

struct HereDoc {
  LocText body;  // expanded unless the delimiter was quoted
  Loc loc;       // first line of the body
};

struct Comment {
  std::string text;  // without the leading '#'
  Loc loc;
  bool full_line = false;  // nothing but blanks before it on its line
};

struct ShellScan {
  std::vector<ShellCommand> commands;
  std::map<std::string, ShellVar, std::less<>> vars;  // final values
  std::vector<HereDoc> heredocs;
  std::vector<Comment> comments;
  std::vector<Warning> warnings;
};

// Reads a whole script. `file` names it in warnings (unterminated quotes and the like).
// `base_line` is added to every line number (for a script embedded in another file).
ShellScan ScanShell(std::string_view text, std::string_view file, uint32_t base_line = 0);

// Tokenizes and expands one command line against `vars` (used for `#SBATCH` lines and
// commands quoted in comments). Words of a comment keep the comment's positions.
std::vector<ShellWord> ExpandLine(std::string_view line, Loc start, const ShellScan& scope);

}  // namespace orrery::semantic
