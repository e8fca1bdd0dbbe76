// `orrery plan estimate --phase prefill|decode|verify` (the inference cost model) and
// `orrery plan fit-infer` / `validate-infer` (its constants against measured steps).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "base/result.h"

namespace orrery::cli {

struct InferEstimateArgs {
  std::string phase;  // empty: the training estimate
  uint32_t batch = 1;
  double context = 0;
  uint32_t verify_tokens = 0;
  uint32_t tp = 1;
  uint32_t sp = 1;
};

// Adds --phase, --batch, --context, --verify-tokens and --tp to the estimate command.
void AddInferEstimateOptions(CLI::App* estimate, InferEstimateArgs* a);
// Refuses, on the estimate command, the flags of an inference step (for a training estimate).
Status RefuseInferenceOnly(const CLI::App& estimate);
// Runs the inference estimate of `model` on `gpu` (exit code).
int RunInferEstimate(const CLI::App& estimate, const InferEstimateArgs& a, const std::string& model, const std::string& gpu,
                     bool json);

void RegisterPlanInfer(CLI::App& plan, int* exit_code);

}  // namespace orrery::cli
