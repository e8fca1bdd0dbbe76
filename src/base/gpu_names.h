// One GPU naming across commands (docs/cli.md): h100, h200, a100-40, a100-80, v100,
// case-insensitive, '_' read as '-'; the spellings commands used before (a100-80g, h100-sxm,
// V100-16, ...) are aliases. Each command maps the canonical name to what it models.
#pragma once

#include <string_view>

namespace orrery {

inline constexpr std::string_view kGpuNames = "h100, h200, a100-40, a100-80, v100";

// The canonical name of `name`, or "" when it names no known GPU.
std::string_view CanonicalGpu(std::string_view name);

}  // namespace orrery
