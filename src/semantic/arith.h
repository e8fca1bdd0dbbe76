// Integer arithmetic of shell `$((...))` and of simple Python assignments (`5 * 8`):
// + - * / % ** and parentheses, unary minus, decimal literals (with `_` separators, as
// Python and bigscience's scripts write them), and names looked up by the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace orrery::semantic {

// Value of a name, or nullopt when unknown (the whole expression is then unknown).
using ArithLookup = std::function<std::optional<double>(std::string_view name)>;

// Evaluates `expr`; nullopt when it is malformed, divides by zero, or names an unknown
// variable. Integer division truncates when `integer` (shell), else it is exact (Python /).
std::optional<double> EvalArith(std::string_view expr, const ArithLookup& lookup, bool integer);

}  // namespace orrery::semantic
