// `orrery replay --slurm`: the pure parts (no Slurm, no wall clock), unit-tested in
// replay_test.cc. A trace segment is selected, its arrivals (relative to the segment's
// first submit) and durations are divided by the speedup, and each job's GPU demand is
// mapped onto the real cluster's node size; the same scaled segment is what the live run
// submits and what Simulate() predicts. Compare() turns measured and predicted per-job
// times into the figures of summary.json (docs/formats/replay.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "model/outcome.h"
#include "model/trace.h"
#include "slurm/accounts.h"

namespace orrery::cli::replay {

struct SegmentOptions {
  uint64_t skip = 0;         // trace jobs (in submit order, any kind) skipped before the segment
  uint64_t jobs = 0;         // replayed jobs at most (0 = no limit)
  Duration window = 0;       // trace seconds after the segment's first submit (0 = no limit)
  double speedup = 1;        // arrivals and durations are divided by it
  uint32_t node_gpus = 8;    // GPUs per node of the real cluster
  uint32_t cluster_nodes = 1;
  bool clamp_oversize = false;  // a job larger than the cluster: clamped to it (else skipped)
  Duration max_duration = 0;    // scaled durations capped at this (0 = no cap)
};

struct ReplayJob {
  uint32_t index = 0;        // trace job index
  std::string source_id;     // the trace's own id ("" if none)
  Time arrival = 0;          // scaled seconds after the segment's first submit
  Duration duration = 1;     // scaled, >= 1 s
  uint32_t nodes = 1;        // sbatch -N
  uint32_t gpus_per_node = 1;  // sbatch --gres=gpu:K
  std::string user;          // the trace's user ("" if none)
  uint32_t trace_gpus = 0;   // as the trace asks (fractional = 1)
  Duration trace_duration = 0;
  uint32_t gpus() const { return nodes * gpus_per_node; }
};

struct Segment {
  std::vector<ReplayJob> jobs;
  Time first_submit = 0;      // trace time of the segment's first job
  uint64_t considered = 0;    // trace jobs looked at inside the segment
  uint64_t skipped_cpu = 0;   // no GPU: not replayed (the simulator skips them too)
  uint64_t skipped_no_duration = 0;
  uint64_t skipped_oversize = 0;  // more GPUs than the cluster (without clamp_oversize)
  uint64_t clamped_oversize = 0;
  uint64_t reshaped = 0;      // GPUs rounded up to nodes × an equal share per node
  uint64_t fractional = 0;    // fractional-GPU jobs replayed as one whole GPU
  uint64_t duration_capped = 0;
};

Result<Segment> SelectSegment(const Trace& trace, const SegmentOptions& o);

// The segment as a trace for Simulate(): submit = arrival, duration = scaled duration,
// gpus = nodes × gpus_per_node, nodes as the live daemon sees the Slurm job (0 for one
// node, the placer decides; N for N > 1), no user/name/VC/walltime (the daemon sees none).
Trace SegmentTrace(const Segment& s);

// The wave latency (docs/validation/live.md, "Dependency waves"): on a live Slurm a start that
// waits for a completion comes about `latency` seconds after it (the completion seen, the next
// job released or scheduled, Slurm's launch); Simulate() starts it in the same second. The
// prediction models it by letting every job hold its GPUs `latency` seconds past its end:
// HoldLonger adds it to every duration (and time limit) before Simulate(), ReleaseEarlier takes
// it off every ended job's end and run time after, so a job's own predicted end is unchanged and
// each job that waited for it starts `latency` later. 0 leaves both unchanged.
Trace HoldLonger(Trace t, Duration latency);
void ReleaseEarlier(std::vector<JobOutcome>& outcomes, Duration latency);

// Per-job inputs of the comparison, seconds relative to the replay's t0. A job without a
// measured end (did not complete) is left out of every figure and counted.
struct JobTimes {
  bool measured = false;
  double m_wait = 0, m_jct = 0, m_end = 0;  // measured: start - submit, end - submit, end
  double p_wait = 0, p_jct = 0, p_end = 0;  // predicted by Simulate()
  double m_start = 0, p_start = 0;          // start, measured and predicted
};

struct Comparison {
  size_t jobs = 0, measured = 0;
  double avg_jct_measured = 0, avg_jct_predicted = 0;
  double jct_rel_error = 0;                 // (measured - predicted) / predicted, of the averages
  double avg_wait_measured = 0, avg_wait_predicted = 0;
  double wait_error_s = 0;                  // measured - predicted (averages)
  // Per-job JCT error: absolute seconds |m - p| and relative |m - p| / p, nearest-rank percentiles.
  double p50_abs_jct_error_s = 0, p95_abs_jct_error_s = 0;
  double p50_rel_jct_error = 0, p95_rel_jct_error = 0;
  // Completion order over job pairs whose ends differ in both runs (ties excluded):
  // agreement = C / (C + D), Kendall tau = (C - D) / (C + D).
  uint64_t pairs = 0, concordant = 0, discordant = 0;
  double order_agreement = 1, kendall_tau = 1;
  // Start order, the same way (pairs whose starts differ in both runs).
  uint64_t start_pairs = 0, start_concordant = 0, start_discordant = 0;
  double start_kendall_tau = 1;
  double mean_abs_start_error_s = 0;        // mean |measured start - predicted start|
};

Comparison Compare(const std::vector<JobTimes>& jobs);

// --- `--native`: Slurm schedules by itself, under the users and accounts of a sacctmgr listing

struct NativeUser {
  std::string user, account;
};

// The users a native replay submits as: each user of the listing once, in file order, with the
// account of its first association (as the slurm policy charges a job without an account: the
// user's default account). root is left out unless no other user is listed. Empty: none listed.
std::vector<NativeUser> NativeUsers(const slurm::Accounts& accounts);

// For each segment job, the index of its user in a list of n (n > 0): the segment's distinct
// trace users, in the order of their first job, dealt round robin (jobs without a user are one
// more user, ""), so that a trace user's jobs stay one Slurm user's.
std::vector<uint32_t> AssignUsers(const Segment& s, size_t n);

// A job's Slurm time limit for a scaled duration d: whole minutes (slurmctld keeps minutes),
// the smallest at least d + kTimeLimitMargin s, so that the sleep ends before the limit.
inline constexpr Duration kTimeLimitMargin = 5;
Duration NativeTimeLimit(Duration d);

// The segment as `--native` submits it and the slurm policy predicts it: SegmentTrace with each
// job's user (users[assigned[i]].user) and its time limit as the walltime.
Trace NativeTrace(const Segment& s, const std::vector<NativeUser>& users, const std::vector<uint32_t>& assigned);

// Nearest-rank percentile (q in [0,1]) of v (copied and sorted); 0 for an empty v.
double NearestRank(std::vector<double> v, double q);

}  // namespace orrery::cli::replay
