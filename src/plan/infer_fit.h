// The inference cost model against measured steps: reading the profiler's CSV
// (tools/profile/infer.py, docs/formats/infer-profile.md), errors per phase and per
// configuration, and the fit of a GPU's constants on some configurations with others held out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "plan/infer.h"

namespace orrery::plan {

struct MeasuredInfer {
  std::string config;  // model:tp
  DecoderShape shape;  // the preset, with the measured layer count
  InferStep step;
  double step_s = 0;
};

// Rows whose status is not `ok` (skipped for memory, out of memory) are left out; '#' lines are
// comments. Errors name file:line:col.
Result<std::vector<MeasuredInfer>> ReadInferSteps(const std::string& path);
// The same from text in memory; `name` stands for the file in messages.
Result<std::vector<MeasuredInfer>> ParseInferSteps(std::string_view text, const std::string& name);

struct InferErrorRow {
  std::string group;  // a phase or a model:tp configuration
  size_t points = 0;
  double mean_abs_rel = 0;  // mean |predicted / measured - 1|
  double max_abs_rel = 0;
};

struct InferValidation {
  std::vector<InferErrorRow> by_phase;   // prefill, decode, verify (those present)
  std::vector<InferErrorRow> by_config;  // in first-seen order
  InferErrorRow all;
};

// Errors of the model with the profiler's counting (kProfilerCounting).
InferValidation ValidateInfer(const std::vector<MeasuredInfer>& points, const InferGpu& g);

struct InferFit {
  InferGpu gpu;
  InferValidation fitted;    // on the configurations the constants were fitted on
  InferValidation held_out;  // on the configurations set aside before fitting
};

// Fits the nine constants of `start` (efficiencies, half-rate tokens, elementwise passes, fixed
// costs) on the points whose configuration is not in `hold_out`, minimising the mean squared
// log ratio of predicted to measured time (Nelder–Mead from `start`, deterministic). Datasheet
// figures, link constants and the memory reserve are kept. Errors when a held-out name matches
// no point or nothing is left to fit on.
Result<InferFit> FitInfer(const std::vector<MeasuredInfer>& points, const std::vector<std::string>& hold_out,
                          const InferGpu& start);

// Datasheet figures and the unmeasured tensor-parallel link constants of a GPU kind (h100,
// h200), the start of a fit (docs/design/inference.md cites them).
Result<InferGpu> InferDatasheet(std::string_view gpu);

}  // namespace orrery::plan
