// The pool of `orrery plan search` and `orrery.plan.search`, one row per case.
#include "plan/sailor_search.h"

#include <gtest/gtest.h>

namespace orrery::plan {
namespace {

TEST(SailorPool, OneRowPerCase) {
  const struct {
    const char* text;
    const char* want;  // "GPU=COUNT@ZONE;..." or the error's words
  } cases[] = {
      {"sailor:A100-40=16", "A100-40=16@;"},
      {"sailor:A100-40=16,V100-16=32", "A100-40=16@;V100-16=32@;"},
      {"sailor:A100-40=64@us-central1-a,V100-16=384@us-west1-b", "A100-40=64@us-central1-a;V100-16=384@us-west1-b;"},
      {"A100-40=16", "must read sailor:"},
      {"sailor:", "empty --pool"},
      {"sailor:A100-40", "must read TYPE=COUNT[@ZONE]"},
      {"sailor:A100-40=0", "0 < COUNT <= 1000000"},
      {"sailor:A100-40=2000000", "0 < COUNT <= 1000000"},
      {"sailor:A100-40=16,", "pool entry \"\""},  // a trailing comma names an empty entry
      {"sailor:A100-40=1x", "must read TYPE=COUNT"},
  };
  for (const auto& c : cases) {
    auto r = ParseSailorPool(c.text);
    std::string got;
    if (r.ok()) {
      for (const SailorPoolEntry& e : *r) got += e.gpu + "=" + std::to_string(e.count) + "@" + e.zone + ";";
      EXPECT_EQ(got, c.want) << c.text;
    } else {
      EXPECT_NE(r.error().message.find(c.want), std::string::npos) << c.text << ": " << r.error().message;
    }
  }
}

}  // namespace
}  // namespace orrery::plan
