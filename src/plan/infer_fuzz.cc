// libFuzzer target: the inference step CSV and the inference profile readers never crash and
// either return their data or a located error; every step read from a CSV has a finite, positive
// predicted time under the shipped-shaped default constants.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plan/infer.h"
#include "plan/infer_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto steps = orrery::plan::ParseInferSteps(text, "fuzz.csv");
  if (steps.ok()) {
    orrery::plan::InferGpu g;
    g.memory_bytes = 80e9, g.peak_flops = 1e15, g.hbm_bytes_per_s = 3e12;
    for (const auto& p : *steps) {
      const double t = orrery::plan::InferStepTime(p.shape, p.step, g).step_time_s;
      if (!std::isfinite(t) || t <= 0) __builtin_trap();
    }
  } else if (steps.error().message.rfind("fuzz.csv", 0) != 0) {
    __builtin_trap();
  }
  auto gpu = orrery::plan::ParseInferGpuText(text, "fuzz.json");
  if (gpu.ok()) {
    (void)orrery::plan::InferGpuJson(*gpu);
  } else if (gpu.error().message.rfind("fuzz.json", 0) != 0) {
    __builtin_trap();
  }
  return 0;
}
