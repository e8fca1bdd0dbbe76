// libFuzzer target: the RL jobs file reader never crashes and either returns jobs or a located
// error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rl/jobs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto jobs = orrery::rl::ParseRlJobs(text, "fuzz.csv");
  if (!jobs.ok() && jobs.error().message.rfind("fuzz.csv", 0) != 0) __builtin_trap();
  return 0;
}
