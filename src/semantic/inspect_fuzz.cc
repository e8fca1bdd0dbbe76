// libFuzzer target: the launch-config reader on arbitrary bytes, in every format (the first
// byte picks the file name, hence the reader). Properties: no crash, no hang; every cited
// line lies inside the input; the JSON output always serializes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "semantic/inspect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kNames[] = {"a.sh", "a.json", "a.yaml", "a.toml", "a.py", "a.md", "a.slurm", "noext"};
  std::string name = kNames[data[0] % 8];
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  orrery::semantic::LaunchSchema s = orrery::semantic::InspectText(name, text);
  for (const auto& fv : s.fields) {
    if (fv && fv->origin.file == name && fv->origin.line > lines + 1) std::abort();
  }
  (void)orrery::semantic::ToJson(s).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return 0;
}
