#include "base/gpu_names.h"

#include "base/parse.h"

namespace orrery {

namespace {

struct Alias {
  std::string_view alias, canonical;
};

// Datasheet and vendor spellings seen in configs, profiles and earlier command lines.
constexpr Alias kAliases[] = {
    {"h100", "h100"},       {"h100-sxm", "h100"},    {"h100-sxm5", "h100"},   {"h100-80", "h100"},
    {"h100-80g", "h100"},   {"h200", "h200"},        {"h200-141", "h200"},    {"h200-141g", "h200"},
    {"h200-sxm", "h200"},   {"a100-40", "a100-40"},  {"a100-40g", "a100-40"}, {"a100-40gb", "a100-40"},
    {"a100-sxm4-40gb", "a100-40"}, {"a100-80", "a100-80"}, {"a100-80g", "a100-80"}, {"a100-80gb", "a100-80"},
    {"a100-sxm4-80gb", "a100-80"}, {"v100", "v100"}, {"v100-16", "v100"}, {"v100-16g", "v100"},
    {"v100-16gb", "v100"},  {"v100-sxm2-16gb", "v100"},
};

}  // namespace

std::string_view CanonicalGpu(std::string_view name) {
  for (const Alias& a : kAliases)
    if (SpellsName(name, a.alias)) return a.canonical;
  return {};
}

}  // namespace orrery
