// Shared by the commands that drive a live Slurm cluster (`serve`, `replay`): the daemon's
// wall clock and the stop flag that SIGINT/SIGTERM set (the handlers are installed by each
// command, which decides what a stop means for it).
#pragma once

#include <atomic>
#include <ctime>

#include "base/time.h"

namespace orrery::cli {

class WallClock final : public Clock {
 public:
  Time Now() const override { return static_cast<Time>(std::time(nullptr)); }
};

inline std::atomic<bool> g_stop{false};
inline void OnSignal(int) { g_stop.store(true); }

}  // namespace orrery::cli
