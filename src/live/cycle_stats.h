// What one decision cycle of the live daemon did, filled by the owners that act in it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/time.h"

namespace orrery::live {

// What one cycle did and how long it took (wall clock, for /metrics and the benchmark).
struct CycleStats {
  Time now = 0;
  int64_t cycle = 0;
  double observe_ms = 0, decide_ms = 0, apply_ms = 0, total_ms = 0;
  double housekeeping_ms = 0;  // journal checkpoint after the decisions are applied (not in total_ms)
  size_t starts = 0, requeues = 0, apply_errors = 0;
  size_t recoveries = 0, drains = 0;  // failed/hung jobs handled, nodes drained this cycle
  size_t power_ups = 0, power_downs = 0;  // energy-policy power decisions applied this cycle
  size_t pending = 0, running = 0;
  size_t node_rows = 0;  // node rows Slurm listed as new, changed or gone (every row on a full listing)
  size_t job_rows = 0;   // job rows reconciled: listed (new, changed, swept; every row on a full listing) and again (relisted)
  size_t relisted = 0;   // of those, rows reconciled again from the previous cycle (resync.cc)
  bool rebuilt = false;
  bool decided = false;  // the policy ran a cycle (periodic policies: only at their ticks)
};

}  // namespace orrery::live
