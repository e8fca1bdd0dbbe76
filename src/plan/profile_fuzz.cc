// libFuzzer target: the GPU profile parser never crashes and either returns a profile or a
// located error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plan/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  orrery::Result<orrery::plan::GpuProfile> p = orrery::plan::ParseProfileJson(text, "fuzz.json");
  if (p.ok()) {
    (void)orrery::plan::ProfileToJson(*p);
  } else if (p.error().message.rfind("fuzz.json", 0) != 0) {
    __builtin_trap();
  }
  return 0;
}
