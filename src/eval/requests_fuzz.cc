// libFuzzer target: the evaluation request CSV reader. Properties: never crashes; parsed
// requests have unique, non-empty names and non-negative submit times; errors are located
// ("<fuzz>:").
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "eval/requests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = orrery::eval::ParseRequests(text, "<fuzz>", "base");
  if (!r.ok()) {
    if (r.error().message.rfind("<fuzz>", 0) != 0) std::abort();
    return 0;
  }
  std::set<std::string> names;
  for (const auto& q : *r) {
    if (q.name.empty() || !names.insert(q.name).second || q.submit < 0 || q.suite.empty()) std::abort();
  }
  return 0;
}
