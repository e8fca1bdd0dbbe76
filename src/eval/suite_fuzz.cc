// libFuzzer target: the suite CSV reader. Properties: never crashes; a parsed suite has
// unique, non-empty names and positive example counts; errors are located ("<fuzz>:").
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "eval/suite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = orrery::eval::ParseSuite(text, "<fuzz>");
  if (!s.ok()) {
    if (s.error().message.rfind("<fuzz>:", 0) != 0) std::abort();
    return 0;
  }
  std::set<std::string> names;
  for (const auto& d : s->datasets) {
    if (d.name.empty() || !names.insert(d.name).second) std::abort();
    if (d.examples && *d.examples == 0) std::abort();
  }
  return 0;
}
