// One GPU naming: every alias and case maps to its canonical name; anything else to "".
#include "base/gpu_names.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

TEST(GpuNames, AliasesAndCaseMapToTheCanonicalName) {
  struct Case {
    const char* given;
    const char* canonical;
  } cases[] = {
      {"h100", "h100"},         {"H100", "h100"},       {"h100-sxm", "h100"},   {"H100_SXM5", "h100"},
      {"h200", "h200"},         {"H200", "h200"},       {"a100-40", "a100-40"}, {"A100-40G", "a100-40"},
      {"a100_sxm4_40gb", "a100-40"}, {"a100-80g", "a100-80"}, {"A100-80", "a100-80"}, {"V100-16", "v100"},
      {"v100", "v100"},         {"a100", ""},           {"h200-shared", ""},    {"", ""},
      {"h1000", ""},            {"mi300x", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(CanonicalGpu(c.given), c.canonical) << c.given;
}

}  // namespace
}  // namespace orrery
