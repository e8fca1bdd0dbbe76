// Helios-compatible mode: reproduces the reference simulator of the Helios study
// (HeliosArtifact "QSSF Service") job for job, quirks included:
//   * each VC is an independent partition of 8-GPU nodes, CPUs/memory ignored;
//   * at each second: completions → arrivals (in tie order) → stable sort of the whole
//     queue → place in order with the consolidate placer until the first failure;
//   * FIFO sorts by submit time, SJF by true duration; QSSF first sorts by GPU count and,
//     only when the queue holds a job that waited before this second, gives every job
//     without a priority estimate × GPUs (computed once, kept) and sorts by it.
// Seconds with no event change nothing, except the second after a QSSF sort that saw
// only new arrivals: that one is simulated too (the queue is re-sorted by priority then).
#pragma once

#include "sim/simulator.h"

namespace orrery {

// config.policy: "fifo", "sjf" or "qssf[:estimator=...]"; config.placer must be consolidate.
Result<SimResult> SimulateHeliosCompat(const Trace& trace, const Cluster& cluster, const SimConfig& config);

}  // namespace orrery
