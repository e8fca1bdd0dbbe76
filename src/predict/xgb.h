// Gradient-boosted duration model through XGBoost's C API (Debian libxgboost-dev 1.7).
//
// Features are computed at submit time (the first Estimate() of a job) from the job's
// request and from statistics of the jobs that have finished so far (no look-ahead):
// see FeatureNames() and docs/predict.md. Target = log(max(duration, 1)); prediction =
// exp(margin), rounded, ≥ 1 s.
//
// Training is online: every Observe()d job becomes a training row (with the features it
// had at submit; a job observed without a prior Estimate() gets features computed at
// observe time). The booster is (re)trained from scratch on all rows so far (the newest
// max_rows) when an Estimate() finds: no model yet and ≥ min_train rows; or ≥
// retrain_jobs new rows (when retrain_jobs > 0); or ≥ retrain_seconds of simulated time
// since the last training with new rows present. Until the first model exists the
// estimate is the smoothed user/global mean (or 0 with zero_when_untrained, which the
// blend uses to fall back to history).
//
// Retraining schemes (Retrain, key `retrain=`):
//  * full (the default of the estimator): from scratch on the newest max_rows (200,000) rows,
//    100 rounds, 256 histogram bins; a retraining's cost grows with the rows up to max_rows.
//  * window (WindowOptions; Lucid's default): the same from-scratch retraining on a short
//    window of the newest rows (max_rows 10,000) with 30 rounds at eta 0.15 and 32 bins, so
//    every retraining costs the same bounded amount (docs/predict.md compares the accuracy).
//  * incremental: the first model is trained from scratch as above; each later retraining,
//    instead of starting over, adds update_rounds trees (default 10) fitted to the rows
//    observed since the previous training, on top of the current model (XGBoost training
//    continuation). Cost per retraining is proportional to the new rows; the forest grows.
// history() lists every training: when, which rows, how many trees.
//
// Determinism: nthread (default 1), seed, tree_method=hist, no subsampling → the same
// call sequence gives the same predictions.
//
// Prediction: each trained model is also loaded into an XgbForest (native evaluation, the
// library's float arithmetic) after checking that it predicts a sample of the training rows
// bit-identically to XGBoost; single-row estimates then cost a tree walk instead of a
// DMatrix and a library call (which also re-reads the cgroup CPU quota every time). A model
// that fails the check is evaluated by XGBoost.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "model/trace.h"
#include "predict/estimator.h"
#include "predict/flat_index.h"
#include "predict/pending_rows.h"
#include "predict/xgb_forest.h"

namespace orrery {

class XgbEstimator final : public DurationEstimator {
 public:
  enum class Retrain { kFull, kWindow, kIncremental };
  struct Options {
    int rounds = 100;
    int max_depth = 6;
    double eta = 0.1;
    double min_child_weight = 1;
    double lambda = 1;
    int max_bin = 256;                         // histogram bins per feature (XGBoost's default)
    int nthread = 1;
    int seed = 0;
    uint32_t min_train = 200;
    uint32_t retrain_jobs = 0;                 // 0 = off
    int64_t retrain_seconds = 7 * 86400;       // 0 = off
    uint32_t max_rows = 200000;
    Retrain retrain = Retrain::kFull;
    int update_rounds = 10;                    // trees added per incremental retraining
    bool zero_when_untrained = false;
    bool use_walltime = true;                  // false: the walltime feature is left out (NaN)
    Duration fallback = 3600;                  // no history at all
    // Feature subset (indices into FeatureNames()); empty = all features.
    std::vector<int> columns;
    // XGBoost interaction_constraints over the subset's positions (e.g. "[[0,7],[1]]");
    // empty = unconstrained.
    std::string interaction_constraints;
    std::string label = "xgboost";             // name()
  };
  // The window scheme's settings on top of `base` (see the header comment).
  static Options WindowOptions(Options base);
  // The GA2M-like preset: depth-2 trees on an interpretable feature subset, main effects
  // plus a few pairwise terms (see docs/predict.md).
  static Options Ga2mOptions(Options base);

  // `trace` (may be null) supplies names, users and the epoch for calendar features.
  XgbEstimator(const Trace* trace, Options o);
  ~XgbEstimator() override;
  XgbEstimator(const XgbEstimator&) = delete;
  XgbEstimator& operator=(const XgbEstimator&) = delete;

  std::string_view name() const override { return o_.label; }
  const Options& options() const { return o_; }
  Duration Estimate(const Job& job, Time now) override;
  void Observe(const Job& job, Duration actual) override;
  // SHAP interaction values of the model (XGBoost pred_interactions), in log-seconds:
  // one term per feature (main effect) and one per feature pair with a non-zero value.
  bool Explain(const Job& job, Time now, EstimateExplanation* out) override;
  // Names of the features the model uses (the subset when columns are set).
  std::vector<std::string> UsedFeatureNames() const;

  bool trained() const { return booster_ != nullptr; }
  // True when the current model is evaluated natively (see XgbForest).
  bool native() const { return forest_.has_value(); }
  int trainings() const { return trainings_; }
  // One successful training: the rows [first_row, first_row + rows) of the observation order
  // (the n-th Observe()d job is row n), the simulated time of the Estimate() that triggered it
  // (kNoTime for an explicit Train()), and the number of trees of the resulting model.
  struct Training {
    Time at = kNoTime;
    size_t first_row = 0, rows = 0;
    int trees = 0;
    bool operator==(const Training&) const = default;
  };
  const std::vector<Training>& history() const { return history_; }
  // Training rows held in memory (the rows a later training can still read, amortized).
  size_t stored_rows() const { return y_.size(); }
  double train_seconds() const { return train_seconds_; }
  const std::string& last_error() const { return error_; }
  static const std::vector<std::string>& FeatureNames();
  static int NumFeatures();

  // Trains now on the rows so far (normally triggered by Estimate() at `at`).
  Status Train(Time at = kNoTime);
  // Raw model output (log-duration) for a feature row; for tests.
  Result<double> PredictLog(const std::vector<float>& row);
  // The same through XGBoost's own predictor (what native() evaluation must equal); for tests.
  Result<double> LibraryPredictLog(const std::vector<float>& row);
  std::vector<float> Features(const Job& job, Time now);

 private:
  struct Running {  // statistics of a key's finished jobs (log durations)
    uint64_t n = 0;
    double sum_log = 0;
    double last_log = 0;
    double ewma_log = 0;
    void Add(double l);
    float Mean() const;
  };
  static constexpr size_t kUserWindow = 20;
  struct UserState {
    Running all;
    // The last kUserWindow durations (seconds) in arrival order (a ring) and sorted, so that
    // the median costs an insertion per finished job instead of a sort per submission.
    std::array<double, kUserWindow> last{}, sorted{};
    uint8_t last_n = 0, last_next = 0;
    float median_log = 0;  // log of the median of `last`
    bool submitted = false;   // last_submit is set
    float bucket = -1;        // hash(user name) mod 4096; -1 until first computed
    Time last_submit = 0;     // the user's latest submission seen by Features()
    std::vector<std::pair<uint32_t, Running>> by_gpus;  // per GPU count (a user has few)
    Running& Gpus(uint32_t gpus);
    void AddLast(double seconds);
  };
  // Per (user, name): its finished jobs, and the (user, stem) statistics (an entry of
  // user_stem_).
  struct UserNameState {
    Running stats;
    Running* user_stem = nullptr;
  };
  // Per job name: its finished jobs, and the statistics of its stem and first token (entries of
  // stem_ / token_, shared by every name with that stem or token; unordered_map entries do not
  // move, so the pointers stay valid).
  struct NameState {
    Running stats;
    uint64_t stem = 0;
    Running* stem_stats = nullptr;  // null until the name is first seen
    Running* token_stats = nullptr;
    float token_bucket = 0, length = 0, digits = 0;
  };
  // Dense per-id state (user, name and VC ids are indices into the trace's pools), grown on
  // first use.
  UserState& User(UserId u);
  NameState& Name(NameId n);
  UserNameState& UserName(UserId u, NameId n, uint64_t stem);
  Running& Vc(VcId v);
  bool HasName(const Job& job) const { return job.name.valid() && trace_ && job.name.v < trace_->names.size(); }
  // Fills the kAll features of `job` into `f`; returns the job's (user, name) state (null
  // when it has none), which Update() then needs not look up again.
  UserNameState* FillFeatures(const Job& job, float* f);
  float UserBucket(UserId u, UserState& us) const;
  // Adds `job` to pending_ with its submit-time row; returns its slot.
  uint32_t AddPending(const Job& job);
  // `un`: the job's (user, name) state if known (else looked up).
  void Update(const Job& job, double log_d, UserNameState* un);
  void SelectInto(const float* full, float* out) const;
  size_t Cols() const { return o_.columns.empty() ? kAll : o_.columns.size(); }
  static constexpr size_t kAll = 31;  // FeatureNames().size()
  bool ShouldTrain(Time now) const;
  double FallbackLog(const Job& job) const;

  Result<double> PredictLog(const float* row, size_t n);
  Result<double> LibraryPredictLog(const float* row, size_t n);
  void LoadForest(size_t first, size_t n);
  Status SetParams(void* booster);
  Status Boost(void** booster, size_t first, size_t n, int from, int rounds);

  const Trace* trace_;
  Options o_;
  void* booster_ = nullptr;  // BoosterHandle
  std::optional<XgbForest> forest_;  // booster_ evaluated natively, when verified
  int trainings_ = 0;
  std::vector<Training> history_;
  double train_seconds_ = 0;
  std::string error_;
  Time last_train_time_ = kNoTime;
  size_t rows_at_last_train_ = 0;

  // Training rows still needed, row-major: row r (the r-th Observe()d job) is at
  // x_[(r - row_base_) · Cols()]; rows no later training can read are dropped (DropRowsBefore).
  std::vector<float> x_;
  std::vector<float> y_;       // labels (log seconds)
  size_t row_base_ = 0;
  size_t Rows() const { return row_base_ + y_.size(); }  // rows observed so far
  const float* Row(size_t r) const { return x_.data() + (r - row_base_) * Cols(); }
  void DropRowsBefore(size_t keep);
  // Job id -> submit-time features (Cols() values) and the job's (user, name) state.
  PendingRows<UserNameState*> pending_;

  Running global_;
  std::vector<UserState> users_;
  std::vector<NameState> names_;
  std::vector<Running> vcs_;
  // (user << 32 | name) -> index into user_names_ (a deque: pending_ holds pointers into it).
  FlatIndex user_name_index_;
  std::deque<UserNameState> user_names_;
  std::unordered_map<uint64_t, Running> stem_, user_stem_, token_;
};

// Hash of a job name with digits removed ("train_resnet50_run2" -> "train_resnet_run").
uint64_t NameStemHash(std::string_view name);
// Hash of the first token (split at non-alphanumerics).
uint64_t NameFirstTokenHash(std::string_view name);

}  // namespace orrery
