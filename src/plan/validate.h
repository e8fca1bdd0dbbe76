// Prediction error of the cost model on measured training steps (rows in the format of
// ../shared/gpu-h200/calibration.csv).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "plan/estimate.h"

namespace orrery::plan {

enum class Regime { kHostBound, kGpuBound };
// Which rows the constants were fitted on (the split is fixed in docs/validation/planner.md §P before
// any prediction was looked at): the 1.3B model's rows; every other row is held out.
enum class Split { kFit, kHeldOut };

struct MeasuredStep {
  std::string id;
  std::string strategy;
  int gpus = 1;
  std::string model;  // "125M", ...
  int hidden = 0, layers = 0, heads = 0;
  int64_t seq = 0;
  int micro_batch = 0;
  bool ckpt = false;
  double t_median_s = 0;
  double peak_alloc_gib = 0;
  int line = 0;
};

// Reads the rows with status "ok" (others are skipped; an "oom" row is returned with
// t_median_s = 0 so the caller can check the planner also predicts it does not fit).
Result<std::vector<MeasuredStep>> ParseCalibrationCsv(std::string_view text, std::string_view file);

struct ValidationRow {
  MeasuredStep measured;
  Regime regime = Regime::kGpuBound;
  Split split = Split::kHeldOut;
  double pred_step_s = 0;
  double pred_peak_gib = 0;
  bool pred_fits = true;
  double err_time = 0;  // |pred - measured| / measured
  double err_mem = 0;
};

struct ErrorStats {
  int n = 0;
  double mean_time = 0, max_time = 0, mean_mem = 0, max_mem = 0;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  int oom_rows = 0, oom_predicted = 0;
  ErrorStats Stats(Split split, std::optional<Regime> regime) const;
};

// The regime is a property of the configuration, not of any prediction: the H200 README's rule
// (models up to 1.3B at b·s <= 2048 tokens are host-bound in eager PyTorch).
Regime RegimeOf(const MeasuredStep& m);
Split SplitOf(const MeasuredStep& m);

Result<ValidationReport> Validate(const std::vector<MeasuredStep>& rows, const GpuProfile& gpu);

// Leave-one-size-out validation of the multi-GPU constants (docs/plan-multigpu.md): for each
// model size, `comm_compute_slowdown` is fitted on the GPU-bound data-parallel rows of the other
// sizes and `dtensor_op_factor` on their GPU-bound `tp` rows (grid search of the mean relative
// step-time error; every other constant stays as the profile has it), and the held-out size's
// rows are predicted with that fold's constants. Memory has no fitted constant.
struct FoldFit {
  std::string held_out;  // model size, e.g. "1.3B"
  double comm_compute_slowdown = 0;
  double dtensor_op_factor = 0;
  double fit_error_dp = 0, fit_error_tp = 0;  // mean relative step-time error on the fit rows
};
struct LosoReport {
  std::vector<FoldFit> folds;
  FoldFit all;  // fitted on every size (held_out "none"): the defaults of ModelConstants
  ValidationReport held_out;  // every row predicted by the fold that held its size out (split kHeldOut)
  // Mean held-out errors of one strategy ("" = all): step time over GPU-bound rows, memory over all rows.
  ErrorStats Strategy(std::string_view strategy, std::optional<Regime> regime) const;
};
Result<LosoReport> LeaveOneSizeOut(const std::vector<MeasuredStep>& rows, const GpuProfile& gpu);
// The grids searched (ascending).
std::vector<double> SlowdownGrid();
std::vector<double> DtensorFactorGrid();

}  // namespace orrery::plan
