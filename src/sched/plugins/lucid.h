// Lucid (ASPLOS'23; /work/shared/specs/lucid.md §2): non-preemptive priority scheduling
// with indolent GPU packing.
//
//   QueueSort   priority = estimated duration × GPUs (estimate ≤ 0 → 1000 s), ascending
//   Share       indolent packing: for a pending job J (in priority order), the first running
//               job P of J's VC (in start order) with
//                 (i)   P not already sharing (≤ 2 jobs per GPU)
//                 (ii)  P.gpus == J.gpus, and J.gpus ≤ 8 (single node; larger jobs never pack)
//                 (iii) P.gmem < gpu_mem − J.gmem        (per-GPU MiB; gpu_mem = 24,576: RTX 3090)
//                 (iv)  SS(J) + SS(P) ≤ 2                (sharing scores 0/1/2)
//                 (v)   J.priority ≤ ratio × P.priority  (ratio = 2)
//               plus Orrery's interference rule:
//                 (vi)  the interference model predicts both speeds ≥ min_speed (0.8)
//               J then runs on exactly P's GPUs. No partner → exclusive placement; a job that
//               cannot be placed is skipped (greedy) while packing is on.
//   PAS         Prescient Adaptive Sharing: every 100 s packing is switched off when the
//               forecast mean of GPU-job submissions over the next five 10-minute bins is
//               ≤ pas_threshold (2); then the cycle is blocking exclusive placement (FIFO-
//               like head-of-line on priority order), as in Lucid.
//   Forecast    SubmissionForecaster: interpretable additive forecast = ½ recent level (mean of
//               the last six 10-min bins) + ½ time-of-day profile (mean of past days' bins at the
//               same time of day); only the recent level until a day has been seen.
//   Tuner       every `tune_days` (7) of simulated time the PAS threshold is re-set to the 20th
//               percentile of the 10-min submission counts seen so far (never below 1), so
//               "low load" follows the workload instead of Venus' constant 2.
//
//   Profiler    a staging VC of `profiler_nodes` (2) nodes carved out of the cluster (one from
//               each of the VCs with the most nodes, or `profiler_vcs=A+B`); jobs of ≤
//               `profiler_max_gpus` (8) GPUs run there first, least-GPU-first, exclusive, for at
//               most `profiler_limit` (200) s; a job that ends within it is done, the others are
//               handed over to their VC keeping the work done (Lucid's artifact drops it; see
//               docs/validation/sharing.md). The profile (the workload's attributes) is what packing reads.
//
// Job attributes (model, batch, GPU util, GPU memory, AMP) come from the ColocationContext's
// seeded assignment (predict/interference.h); sharing scores from the interference model's
// mean predicted speed per workload (Lucid's < 0.85 → 2, < 0.95 → 1, else 0 labelling).
//
// Parameters: estimator=xgboost:retrain=window (any predict/ estimator spec; the weekly
// retraining on a window of the newest 10,000 finished jobs, predict/xgb.h; the full
// retraining on up to 200,000 of earlier versions is estimator=xgboost), pack=true, pas=true,
// pas_threshold=2, min_speed=0.8, gpu_mem=24576, ratio=2, tune=true, tune_days=7, profiler=true,
// profiler_nodes=2, profiler_limit=200, profiler_max_gpus=8, profiler_vcs=,
// colocation=PATH (default: $ORRERY_SHARED_DIR/traces/lucid-colocation/colocate_info.csv).
#pragma once

#include <array>
#include <functional>
#include <string>

#include "base/result.h"
#include "model/trace.h"
#include "sched/framework/api/policy_parts.h"
#include "sched/plugins/spec_args.h"

namespace orrery {

// Lucid's options (the registry's schema; the defaults are Lucid's artifact's).
OptionSchema LucidOptionSchema();
// Lucid from a parsed policy spec. `ctx` (optional) replaces the context built from the
// colocation table (tests, hand-made scenarios); it must cover every trace job.
Result<PolicyParts> MakeLucidPolicy(const SpecArgs& args, uint64_t seed, const Trace* trace,
                                    std::shared_ptr<const ColocationContext> ctx);
// Same, parsing `spec` ("lucid[:key=value,...]", Lucid's own options only) itself.
Result<PolicyParts> MakeLucidPolicy(const std::string& spec, uint64_t seed, const Trace* trace,
                                    std::shared_ptr<const ColocationContext> ctx);

// Interpretable forecast of GPU-job submissions per 10-minute bin (see above).
class SubmissionForecaster {
 public:
  static constexpr Time kBin = 600;
  explicit SubmissionForecaster(int64_t epoch_unix = 0) : epoch_(epoch_unix) {}
  void Observe(Time submit);
  // Mean forecast count per bin over the `bins` bins starting at the bin containing `now`.
  double PredictMean(Time now, int bins = 5) const;
  // Components of the forecast for one bin (for explanations and tests).
  double Level(Time now) const;                 // mean of the last six complete bins
  double TimeOfDay(Time bin_start, bool* known) const;  // mean at that time of day, past days
  // Percentile (0..1) of the complete bins' counts seen so far (0 if none).
  double CountPercentile(Time now, double q) const;

 private:
  int64_t BinOf(Time t) const { return (t >= 0 ? t : t - kBin + 1) / kBin; }
  static constexpr int64_t kBinsPerDay = 86400 / kBin;
  int64_t epoch_;
  int64_t first_bin_ = INT64_MIN;
  std::vector<uint32_t> counts_;  // per bin since first_bin_
  std::array<uint64_t, kBinsPerDay> tod_total_{};  // per time-of-day slot: the total of its bins
};

// Record of the packing decision for one job (what `orrery explain` shows).
struct PackNote {
  enum Outcome : uint8_t { kNone = 0, kPacked, kTooLarge, kNoCandidate, kRejected, kPackingOff };
  Outcome outcome = kNone;
  uint32_t partner_job = UINT32_MAX;  // trace job id of the partner (kPacked)
  float speed_self = 1, speed_partner = 1;  // predicted speeds (kPacked; kRejected: best rejected pair)
  // Candidates (running, same VC) rejected per rule at the last attempt: i..vi.
  uint16_t rejected[6] = {0, 0, 0, 0, 0, 0};
};
std::string DescribePackNote(const PackNote& n, double min_speed);

}  // namespace orrery
