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

// GPU counts of the Venus GPU jobs submitted alone in their 10-minute bin (submit_gpu_job = 1,
// the bin's submit_gpu_num is then that job's GPUs), as (GPUs, bins): 3,109 bins, mean 5.67 GPUs
// (all jobs: 6.74), E[g^2]/E[g] = 20.4. Source: cluster_throughput.csv; re-derived by the test
// WorkloadCalibrationData.LoneSubmissionSizesMatchThroughputFile and by
// scripts/analyze_queueing.py (section 3). Used by LongRunSizes::kLoneSubmissions.
struct LoneSubmissions {
  unsigned gpus;
  unsigned bins;
};
inline constexpr LoneSubmissions kVenusLoneSubmissionGpus[] = {
    {1, 1549}, {2, 151}, {3, 2},  {4, 224}, {5, 1},  {6, 9},  {7, 14}, {8, 837},  {16, 170}, {24, 45},
    {32, 90},  {40, 4},  {48, 1}, {56, 2},  {64, 4}, {80, 1}, {96, 1}, {128, 1}, {152, 1},  {160, 2}};

}  // namespace orrery::workload
