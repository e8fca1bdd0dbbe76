// TOML text to a toml11 value for the logs module's files (diagnosis rules, the [llm] table),
// with located errors ("file:line:col: TOML syntax error: ...") and a nesting limit checked
// before toml11's recursive parser sees the text, so no input can exhaust the stack.
#pragma once

#include <string>
#include <string_view>

#include <toml.hpp>

#include "base/result.h"

namespace orrery::logs {

Result<toml::value> ParseTomlText(std::string_view text, const std::string& file);

}  // namespace orrery::logs
