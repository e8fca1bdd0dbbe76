// libFuzzer target: the progress tracker. Feeding the input whole or split at any point gives
// the same reading (streaming is exact), ETA is never negative, and nothing crashes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "logs/progress.h"

using namespace orrery::logs;

namespace {

template <class T>
bool Same(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(*a) && std::isnan(*b)) return true;
  }
  return *a == *b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t cut = text.empty() ? 0 : data[0] % (text.size() + 1);
  ProgressTracker whole, split;
  whole.Feed(text, 0);
  whole.Finish(0);
  split.Feed(text.substr(0, cut), 0);
  split.Feed(text.substr(cut), 0);
  split.Finish(0);
  Reading a = whole.latest(), b = split.latest();
  if (!Same(a.step, b.step) || !Same(a.total_steps, b.total_steps) || !Same(a.loss, b.loss) || !Same(a.epoch, b.epoch) ||
      !Same(a.seconds_per_step, b.seconds_per_step) || a.framework != b.framework)
    __builtin_trap();
  if (a.eta_s && !(*a.eta_s >= 0)) __builtin_trap();
  return 0;
}
