// A plan and its predicted schedule as text (for people) and as JSON (docs/formats/eval-plan.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "eval/executor.h"
#include "eval/plan.h"

namespace orrery::eval {

struct PlanReport {
  std::string suite;
  const Workload* workload = nullptr;
  const Plan* plan = nullptr;
  const Schedule* schedule = nullptr;
  ClusterSpec cluster;
  std::string priors;  // where the planner's durations came from ("cost model", "history FILE (k of n datasets)")
};

nlohmann::json PlanJson(const PlanReport& r);
std::string PlanText(const PlanReport& r);
// "mmlu" for a whole dataset, "mmlu[0:7021]" for a slice.
std::string SliceLabel(const Workload& w, const Slice& s);

}  // namespace orrery::eval
