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

// Sweep (batch) sizes of Venus GPU submissions: P(B = k) ~ k^-kVenusBatchZipf, k = 1..kVenusBatchMax.
// Fitted by scripts/analyze_queueing.py on the same file: a compound Poisson process with the
// hour-of-week rate and these batches reproduces the quantiles of submit_gpu_job per 10-minute
// bin (p50 3, p90 11, p99 26, p99.9 88), the share of jobs in bins of >= 20 / >= 50 jobs (16 % / 5 %)
// and the index of dispersion (13.7; Poisson: 1); kVenusBatchMax is the largest bin (717 jobs).
// Test: WorkloadCalibration.SweepsMatchThroughputBursts.
inline constexpr double kVenusBatchZipf = 2.65;
inline constexpr unsigned kVenusBatchMax = 717;

}  // namespace orrery::workload
