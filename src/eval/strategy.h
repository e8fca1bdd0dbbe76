// Evaluation strategies: how a suite's trials become GPU jobs and CPU metric jobs. A closed
// set of plugins behind one interface, made by name like the scheduler's policies:
//
//   coupled                      one GPU job per dataset (suite order): loads the checkpoint
//                                from shared storage, infers, computes its metric on the GPU
//   opencompass-size[:max_task_size=40000,gen_task_coef=20,strategy=heuristic|split]
//                                OpenCompass SizePartitioner tasks; metrics as CPU tasks after
//                                the whole inference stage (NaivePartitioner eval stage)
//   opencompass-workers[:num_worker=8,num_split=NUM_WORKER,min_task_size=16,strategy=heuristic|split]
//                                OpenCompass NumWorkerPartitioner tasks; metrics as above
//   acme[:granularity=4,metric_cut=1]
//                                Acme's trial coordinator: preload once per node, metrics as
//                                CPU jobs released per dataset, prior-based split and merge
//                                balanced by longest-processing-time
//
// The partitioners' rules and defaults are those documented in
// ../shared/corpora/eval-suite/README.md (read at opencompass a5acc4bb).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "eval/executor.h"
#include "eval/plan.h"

namespace orrery::eval {

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
  // Builds a plan for `w` on `c`; the plan covers every example exactly once.
  virtual Plan Build(const Workload& w, const ClusterSpec& c) const = 0;
};

// "acme", "opencompass-size:max_task_size=5000", ... Unknown names or options: error (exit 2).
Result<std::unique_ptr<Strategy>> MakeStrategy(std::string_view spec);
const std::vector<std::string_view>& StrategyNames();

// Builds the plan and checks it covers the workload exactly once.
Result<Plan> BuildPlan(const Strategy& s, std::string_view spec, const Workload& w, const ClusterSpec& c);

// --- the plugins (strategies.cc, opencompass.cc, acme.cc)
struct SizePartitionerOptions {
  uint64_t max_task_size = 40000;
  uint64_t gen_task_coef = 20;
  bool heuristic = true;  // false: strategy=split
};
struct NumWorkerPartitionerOptions {
  uint64_t num_worker = 8;
  uint64_t num_split = 0;  // 0: num_worker
  uint64_t min_task_size = 16;
  bool heuristic = true;
};
struct AcmeOptions {
  uint64_t granularity = 4;  // pieces per GPU's share of the work a long dataset is cut into
  bool metric_cut = true;    // per GPU: a first job for the long-metric datasets, a second for the rest
};

std::unique_ptr<Strategy> MakeCoupled();
std::unique_ptr<Strategy> MakeSizePartitioner(SizePartitionerOptions o);
std::unique_ptr<Strategy> MakeNumWorkerPartitioner(NumWorkerPartitionerOptions o);
std::unique_ptr<Strategy> MakeAcme(AcmeOptions o);

// SizePartitioner's cost factor of a dataset: gen_task_coef for generation (and other
// non-dict templates), the number of candidates for perplexity; x10 for the abbrs OpenCompass
// lists (bbh*, gsm8k*, math*, strategyqa*, agieval-jec*, agieval-gaokao-mathcloze,
// agieval-math, *professional_law).
uint64_t SizeFactor(const DatasetWork& d, uint64_t gen_task_coef);

}  // namespace orrery::eval
