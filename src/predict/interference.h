// GPU-sharing interference: how fast each of two training jobs runs when they share one
// GPU, relative to running alone. Calibrated on Lucid's 1,388 measured single-GPU pairs
// (shared/traces/lucid-colocation/colocate_info.csv, read at run time, never copied).
//
//   ColocationTable   the measured pairs over 56 workloads (model, dataset, batch, AMP)
//   DeriveProfiles    each workload's solo footprint (GPU util %, GPU-memory util %, GPU
//                     memory MiB): the table gives only the *pair's* combined footprint, so
//                     the per-workload values are the least-squares additive decomposition
//                     pair = a + b (ridge 1e-3); this is what Lucid's profiler measures.
//   InterferenceModel gradient-boosted trees (XGBoost, depth 3, 150 rounds) predicting a
//                     job's co-located speed from its own and its partner's profile; the
//                     fitted model is tabulated over all workload pairs (56 × 56).
//   CrossValidate     k-fold error of the model on held-out pairs (profiles re-derived from
//                     the training folds only), with a constant-mean baseline.
//   ColocationContext what a simulation with sharing needs: measured speeds (the truth,
//                     clamped to ≤ 1; model prediction for unmeasured pairs), predicted
//                     speeds (what the policy may use), sharing scores, and the seeded
//                     per-job workload assignment (traces carry no model/batch/utilization
//                     columns: each job gets a workload drawn uniformly from the table's 56,
//                     keyed by (seed, job id), independent of order; see docs/validation/sharing.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/trace.h"

namespace orrery {

struct Workload {
  std::string model, dataset;
  uint16_t batch = 0;
  bool amp = false;
  // Solo profile (derived, see DeriveProfiles).
  float gpu_util = 0, gmem_util = 0, gmem = 0;
  std::string Label() const;  // "ResNet18/CIFAR-10/b64/amp"
};

struct ColocPair {
  uint16_t a = 0, b = 0;        // workload indices
  float speed_a = 1, speed_b = 1;  // normalized throughput of a (b) while co-located
  float gpu_util = 0, gmem_util = 0, gmem = 0;  // combined footprint of the pair
};

class ColocationTable {
 public:
  static Result<ColocationTable> Load(const std::string& path);
  const std::vector<Workload>& workloads() const { return workloads_; }
  std::vector<Workload>& workloads() { return workloads_; }
  const std::vector<ColocPair>& pairs() const { return pairs_; }
  // Index of the pair (a, b) in either order, or -1.
  int32_t Find(uint16_t a, uint16_t b) const { return index_[static_cast<size_t>(a) * workloads_.size() + b]; }
  // Builds from parts (tests).
  static ColocationTable FromParts(std::vector<Workload> w, std::vector<ColocPair> p);

 private:
  void Index();
  std::vector<Workload> workloads_;
  std::vector<ColocPair> pairs_;
  std::vector<int32_t> index_;
};

// Least-squares additive decomposition of the pair footprints over `rows` (pair indices),
// written into table->workloads(). Workloads absent from `rows` get the mean profile.
void DeriveProfiles(ColocationTable* table, const std::vector<size_t>& rows);

class InterferenceModel {
 public:
  struct Options {
    int rounds = 150;
    int max_depth = 3;
    double eta = 0.1;
  };
  static const std::vector<std::string>& FeatureNames();
  static std::vector<float> Features(const Workload& self, const Workload& other);
  // Trains on pairs `rows` of `table` (both directions) and tabulates every workload pair.
  static Result<InterferenceModel> Fit(const ColocationTable& table, const std::vector<size_t>& rows, Options o);
  // Predicted speed of workload a while sharing with b (raw model output, not clamped).
  float Speed(uint16_t a, uint16_t b) const { return speed_[static_cast<size_t>(a) * n_ + b]; }
  size_t size() const { return n_; }
  // A model given as its n×n table of speeds (tests, hand-made scenarios).
  static InterferenceModel FromMatrix(size_t n, std::vector<float> speeds) {
    InterferenceModel m;
    m.n_ = n;
    m.speed_ = std::move(speeds);
    return m;
  }

 private:
  size_t n_ = 0;
  std::vector<float> speed_;
};

struct CvReport {
  int folds = 0;
  size_t pairs = 0, predictions = 0;   // predictions = 2 per held-out pair
  double mae = 0, mape = 0, rmse = 0;  // model, on the speeds
  double base_mae = 0, base_mape = 0;  // constant training-mean baseline
  double corr = 0;                     // Pearson correlation prediction vs measured
  // Admission agreement at `limit`: share of held-out pairs where "min speed ≥ limit"
  // is predicted the same as measured; and false accepts (predicted ok, measured not).
  double limit = 0.8, decision_accuracy = 0, false_accept = 0;
};
Result<CvReport> CrossValidate(const ColocationTable& table, int folds, uint64_t seed, InterferenceModel::Options o,
                               double limit = 0.8);

// Everything a simulation with GPU sharing reads (immutable once built; shared by the
// policy and the simulator).
struct ColocationContext {
  ColocationTable table;         // profiles derived from all pairs
  InterferenceModel model;       // fitted on all pairs
  std::vector<float> truth;      // n×n: measured speed clamped to (0, 1], else model (clamped)
  std::vector<uint8_t> sharing_score;  // per workload: 0 / 1 / 2 (Lucid's Tiny/Medium/Jumbo)
  std::vector<float> mean_speed;       // per workload: model's mean speed over all partners
  std::vector<uint8_t> job_workload;   // per trace job: assigned workload index
  std::string source;                  // table path
  uint64_t seed = 0;

  size_t n() const { return table.workloads().size(); }
  float TrueSpeed(uint16_t a, uint16_t b) const { return truth[static_cast<size_t>(a) * n() + b]; }
  float PredictedSpeed(uint16_t a, uint16_t b) const;  // clamped to (0, 1]
  const Workload& of(JobId j) const { return table.workloads()[job_workload[j.v]]; }
  uint16_t workload(JobId j) const { return job_workload[j.v]; }
};

// Lucid's labelling rule applied to a mean co-located speed: < 0.85 → 2, < 0.95 → 1, else 0.
uint8_t SharingScoreOf(double mean_speed);
// Seeded assignment: workload index for job `id` (uniform over n, stateless).
uint16_t AssignWorkload(uint64_t seed, uint32_t job_id, size_t n);
// Default table location: $ORRERY_SHARED_DIR/traces/lucid-colocation/colocate_info.csv,
// else ../shared/... relative to the working directory, else the build's shared folder.
std::string DefaultColocationPath();
Result<std::shared_ptr<const ColocationContext>> BuildColocationContext(const std::string& path, const Trace* trace,
                                                                        uint64_t seed);

}  // namespace orrery
