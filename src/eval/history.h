// Per-dataset evaluation history (Acme's priors): the measured durations of past trials in a
// SQLite file (docs/formats/eval-history.md). A file of another schema version, or one that
// is not an Orrery evaluation history, is refused with exit status 2.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "eval/cost_model.h"
#include "eval/plan.h"
#include "eval/suite.h"

struct sqlite3;

namespace orrery::eval {

inline constexpr int kHistorySchemaVersion = 1;

// One measurement: a slice's inference (metric_s < 0), or a dataset's metric job (metric_s >= 0,
// examples = the dataset's examples, load_s and infer_s 0).
struct TrialRecord {
  std::string key;          // unique per measurement ("<run id>/<job>/<slice>"): re-recording is a no-op
  std::string dataset;
  double model_params = 0;
  std::string gpu;
  uint32_t gpus = 1;        // GPUs of the trial
  uint64_t examples = 0;    // examples of the slice
  double load_s = 0;        // the job's checkpoint load (incl. waiting for the node cache)
  double infer_s = 0;       // the slice's inference
  double metric_s = -1;     // the dataset's metric job (< 0: this record is a slice's inference)
  double time_scale = 1;    // measured seconds / modelled seconds (1 for real runs; < 1 in tests)
  int64_t recorded_unix = 0;
};

class History {
 public:
  // Opens (create: creating it if missing) and checks the schema version.
  static Result<std::unique_ptr<History>> Open(const std::string& path, bool create);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // Inserts a record; returns false when its key was already recorded.
  Result<bool> Record(const TrialRecord& r);
  // Records all in one transaction (all or nothing); returns how many were new.
  Result<uint64_t> RecordAll(const std::vector<TrialRecord>& rs);
  Result<uint64_t> Count();
  // Priors for the datasets of a sized suite: median seconds per example of the last 20 runs
  // of each dataset on this GPU kind, scaled to `m`'s parameters and `gpus` GPUs (inference
  // scales with parameters and inversely with GPUs). Datasets without runs get no prior (-1).
  Result<std::vector<Prior>> Priors(const Suite& sized, const ModelSpec& m, const GpuSpec& g, uint32_t gpus);

 private:
  History() = default;
  Status Exec(const char* sql);
  Error Err(const std::string& what, int code = kExitRuntime) const;
  Status CheckSchema(bool fresh);
  Result<std::vector<std::pair<double, double>>> Runs(const std::string& dataset, const std::string& gpu,
                                                      const char* column);
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace orrery::eval
