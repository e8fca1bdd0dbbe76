// Constants derived from the shared calibration data (../shared/traces). They are
// shipped so that the generator needs no data files; scripts/derive_calibration.py and
// workload_test.cc (ShippedProfileMatchesThroughputFile) recompute them from the source.
#pragma once

#include <array>

namespace orrery::workload {

// Venus (Helios) GPU jobs submitted per hour, by hour of week (index = dow*24 + hour,
// dow 0 = Monday), averaged over 2020-04-01 .. 2020-09-28. Source:
// traces/helios-aggregates/cluster_throughput.csv, column submit_gpu_job (per 10 min, x6).
extern const std::array<double, 168> kVenusGpuJobsPerHourOfWeek;

}  // namespace orrery::workload
