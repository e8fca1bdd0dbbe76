// Helios' history ("Naive") estimator, reimplemented exactly as HeliosArtifact's
// framework/QSSF Service/estimators/estimator.py (see /work/shared/specs/helios.md §2.1
// and docs/predict.md):
//
//   matches = difflib.get_close_matches(name, all_historical_names, n=2, cutoff=0.6)
//   exact   (matches[0] == name): H = user's jobs named name;
//             H empty -> mean(all users' jobs named name)   else check_history(H)
//   similar (matches non-empty):   H = user's jobs whose name ∈ matches;
//             H empty -> mean(all jobs with those names)    else check_history(H)
//   none:   mean(user's jobs), or mean(all jobs) for a new user ("random" job)
//   check_history(H): restrict H to jobs with the same GPU count when there are any;
//             mean(duration).
//
// Units: Helios returns priorities (the above × gpu_num, check_history as
// int(mean × gpu_num)); Orrery's estimators return durations and QSSF multiplies by
// GPUs, so Estimate() returns the mean duration — truncated toward zero (int(mean)) in
// check_history, rounded to the nearest second in the other branches. HeliosPriority()
// returns the artifact's exact priority value for fidelity checks.
//
// History: every Observe()d (finished) job is appended, as in the artifact's online
// mode; a caller seeds the training history by Observe()-ing the earlier jobs.
// Jobs without a name never match (no-match branch); jobs without a user are "new
// users" (pandas: NaN never equals NaN). With an empty history Estimate() returns the
// fallback (the artifact would produce NaN).
//
// Cost: names repeat, so get_close_matches results are cached per distinct name and
// refreshed incrementally as new names appear (difflib::CloseMatcher): over a run,
// O(#distinct names²) ratio computations at most, each O(len²); per estimate
// otherwise O(1) hash lookups. Aggregates are running integer sums (exact means).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/trace.h"
#include "predict/difflib.h"
#include "predict/estimator.h"

namespace orrery {

class HeliosHistoryEstimator final : public DurationEstimator {
 public:
  enum class Branch : uint8_t {
    kExactUser = 0,    // exact name, user has jobs with it -> check_history
    kExactAll,         // exact name, other users' jobs with it
    kSimilarUser,      // similar names, user has jobs with them -> check_history
    kSimilarAll,       // similar names, other users' jobs with them
    kUserMean,         // no similar name: user's mean
    kGlobalMean,       // no similar name, new user: global mean
    kEmpty,            // no history at all: fallback
  };
  static constexpr int kNumBranches = 7;
  static std::string_view BranchName(Branch b);

  // `trace` supplies the name strings (Trace::names) and must outlive the estimator.
  explicit HeliosHistoryEstimator(const Trace* trace, Duration fallback = 3600);

  std::string_view name() const override { return "history"; }
  Duration Estimate(const Job& job, Time now) override;
  void Observe(const Job& job, Duration actual) override;

  // Helios' priority for the job (estimated GPU-time, the artifact's exact value).
  double HeliosPriority(const Job& job);
  // The branch the last Estimate()/HeliosPriority() took.
  Branch last_branch() const { return last_branch_; }
  const std::array<uint64_t, kNumBranches>& branch_counts() const { return branch_counts_; }
  size_t distinct_names() const { return matcher_.size(); }
  uint64_t ratio_calls() const { return matcher_.ratio_calls(); }

 private:
  struct Agg {
    int64_t sum = 0;
    int64_t count = 0;
    void Add(int64_t d) { sum += d, ++count; }
    void Add(const Agg& o) { sum += o.sum, count += o.count; }
  };
  struct UserName {
    Agg all;
    std::vector<std::pair<uint32_t, Agg>> by_gpus;  // few distinct GPU counts per (user, name)
  };
  static uint64_t Key(UserId u, uint32_t name_index) { return (static_cast<uint64_t>(u.v) << 32) | name_index; }

  // mean and whether it came from check_history (int() semantics); sets last_branch_.
  bool Lookup(const Job& job, double* mean, bool* truncate);

  const Trace* trace_;
  Duration fallback_;
  difflib::CloseMatcher matcher_{2, 0.6};
  std::unordered_map<uint32_t, uint32_t> name_index_;  // NameId -> matcher index
  std::vector<Agg> by_name_;                            // per matcher index (all users)
  std::unordered_map<uint64_t, UserName> by_user_name_;
  std::unordered_map<uint32_t, Agg> by_user_;
  Agg global_;
  Branch last_branch_ = Branch::kEmpty;
  std::array<uint64_t, kNumBranches> branch_counts_{};
};

}  // namespace orrery
