#include "sched/framework/power.h"

#include <algorithm>

namespace orrery {

uint64_t DemandWakeups(const VcPowerLoad& v) {
  if (v.pending_jobs == 0 || v.off == 0) return 0;
  const uint64_t g = std::max<uint64_t>(1, v.gpus_per_node);
  const uint64_t partial_free = v.free_gpus - std::min(v.free_gpus, v.idle_on * g);
  const uint64_t small_left =
      v.pending_small_milli > partial_free * 1000 ? v.pending_small_milli - partial_free * 1000 : 0;
  const uint64_t need = v.pending_big_nodes + (small_left + g * 1000 - 1) / (g * 1000);
  const uint64_t have = v.idle_on + v.booting;
  uint64_t wake = need > have ? need - have : 0;
  if (wake == 0 && v.booting == 0 && v.idle_on == 0) wake = 1;
  return wake;
}

}  // namespace orrery
