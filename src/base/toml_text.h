// The one way Orrery parses TOML text with toml11 (cluster and serve configs through
// config/toml_util, the log rules and [llm] tables in logs/, launch configs in semantic/):
// the checks the text must pass before toml11 may see it (UTF-8 without NUL bytes --
// base/utf8.h says why -- and bounded nesting, since toml11 parses nested arrays and inline
// tables recursively and deep input would exhaust the stack), then the parse, with a toml11
// exception turned into a one-line message at the most precise position it annotates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <toml.hpp>

#include "base/parse.h"
#include "base/result.h"

namespace orrery {

inline constexpr int kMaxTomlNesting = 64;

// The parsed document, or where and why it could not be parsed.
std::variant<toml::value, TextIssue> ParseTomlText(std::string_view text, const std::string& file);

// The same with the issue as an error "file:line:col: message".
Result<toml::value> ParseToml(std::string_view text, const std::string& file);

}  // namespace orrery
