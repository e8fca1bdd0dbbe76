// `orrery resilience`: fault tolerance figures.
//   orrery resilience train [--nodes 2048 --days 54 --failures llama3 --checkpoint SPEC --recovery SPEC]
//       one long gang training job under failures: ETTR, wall time by cause, failures by category,
//       mean time to recover (summary JSON, attempts.csv).
//   orrery resilience attribute TRACE [--failures acme]
//       a trace's recorded failures (FAILED, NODE_FAIL) by category: share of failed jobs and of
//       failed GPU time.
// Formats: docs/formats/resilience.md; the model: docs/design/failures.md.
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json_text.h"
#include "base/io.h"
#include "cli/commands.h"
#include "sched/plugins/recovery.h"
#include "sim/checkpoint_plan.h"
#include "sim/failure_model.h"
#include "sim/training_run.h"
#include "trace/import.h"

namespace orrery::cli {
namespace {

struct TrainArgs {
  uint32_t nodes = 2048, gpus_per_node = 8, cold_nodes = 64;
  double days = 54;
  std::string failures = "llama3", checkpoint = "async:every=young-daly", recovery = "acme:spares=16";
  uint64_t seed = 1;
  uint32_t seeds = 1;
  std::string out, attempts;
  bool quiet = false;
};

struct AttributeArgs {
  std::string trace, failures = "acme", out;
  uint32_t gpus_per_node = 8;
  uint64_t seed = 1;
  bool quiet = false;
};

// Rounds to a multiple of `unit` (a power of ten), dividing by its inverse so that JSON prints it short.
double Round(double v, double unit) { return std::round(v / unit) / std::round(1 / unit); }

nlohmann::ordered_json BucketsJson(const TimeBuckets& b, double gpus) {
  nlohmann::ordered_json j;
  const auto gh = [&](Duration s) { return Round(static_cast<double>(s) * gpus / 3600.0, 0.1); };
  j["productive"] = gh(b.productive);
  j["lost_work"] = gh(b.lost_work);
  j["restart_overhead"] = gh(b.restart_overhead());
  j["restart_detect"] = gh(b.detect);
  j["restart_diagnose"] = gh(b.diagnose);
  j["restart_reschedule"] = gh(b.reschedule);
  j["restart_load"] = gh(b.load);
  j["checkpoint_stall"] = gh(b.stall);
  j["waiting_for_nodes"] = gh(b.waiting);
  return j;
}

nlohmann::ordered_json RunJson(const TrainingRunResult& r, const TrainingRunSpec& spec) {
  nlohmann::ordered_json j;
  const double gpus = static_cast<double>(spec.nodes) * spec.gpus_per_node;
  j["ettr"] = Round(r.ettr, 1e-5);
  j["mtbf_hours"] = Round(r.mtbf_s / 3600.0, 1e-3);
  j["checkpoint_interval_s"] = r.interval;
  j["gpu_hours"] = BucketsJson(r.time, gpus);
  nlohmann::ordered_json cat, cause;
  for (int c = 0; c < kNumFailureCategories; ++c)
    cat[std::string(FailureCategoryName(static_cast<FailureCategory>(c)))] = r.by_category[c];
  for (int c = 0; c < kNumFaultCauses; ++c) cause[std::string(FaultCauseName(static_cast<FaultCause>(c)))] = r.faults[c];
  j["failures_by_category"] = cat;
  j["failures_by_cause"] = cause;
  j["restarts"] = r.restarts;
  j["manual_recoveries"] = r.manual;
  j["cordoned_nodes"] = r.cordoned;
  j["spares_used"] = r.spares_used;
  j["repeat_faults"] = r.repeat_faults;
  j["flaky_node_faults"] = r.flaky_faults;
  j["in_job_restarts"] = r.in_job_restarts;
  j["memory_restores"] = r.memory_restores;
  j["mttr_s"] = Round(r.mttr_s, 0.1);
  return j;
}

Status WriteAttempts(const std::string& path, const AttemptLog& log) {
  Result<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
  if (!f) return f.error();
  (*f)->Write("attempt,start,end,steps_done,steps_durable,gpus,nodes,cause,failure,restartable\n");
  for (const Attempt& a : log.attempts)
    (*f)->Write(std::to_string(a.index) + "," + std::to_string(a.start) + "," + std::to_string(a.end) + "," +
                std::to_string(a.steps_done) + "," + std::to_string(a.steps_durable) + "," + std::to_string(a.gpus) +
                "," + std::to_string(a.node_count) + "," + std::string(EndCauseName(a.cause)) + "," +
                std::string(FailureKindName(a.failure)) + "," + (a.restartable ? "1" : "0") + "\n");
  return (*f)->Commit();
}

Status WriteJson(const std::string& path, const nlohmann::ordered_json& j) {
  Result<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
  if (!f) return f.error();
  (*f)->Write(DumpJson(j, 2) + "\n");
  return (*f)->Commit();
}

int RunTrain(const TrainArgs& a) {
  Result<FailureModel> model = MakeFailureModel(a.failures);
  if (!model) return Fail("resilience", model.error());
  Result<CheckpointPlan> plan = MakeCheckpointPlan(a.checkpoint);
  if (!plan) return Fail("resilience", plan.error());
  Result<RecoveryPolicy> policy = MakeRecovery(a.recovery);
  if (!policy) return Fail("resilience", policy.error());
  TrainingRunSpec spec;
  spec.nodes = a.nodes;
  spec.gpus_per_node = a.gpus_per_node;
  spec.cold_nodes = a.cold_nodes;
  spec.horizon = static_cast<Duration>(std::llround(a.days * 86400));
  nlohmann::ordered_json out;
  out["nodes"] = a.nodes;
  out["gpus_per_node"] = a.gpus_per_node;
  out["days"] = a.days;
  out["failures"] = a.failures;
  out["checkpoint"] = a.checkpoint;
  out["recovery"] = a.recovery;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  double sum = 0, lo = 1, hi = 0;
  for (uint32_t k = 0; k < a.seeds; ++k) {
    Result<TrainingRunResult> r = SimulateTrainingRun(spec, *model, *plan, *policy, a.seed + k);
    if (!r) return Fail("resilience", r.error());
    nlohmann::ordered_json j{{"seed", a.seed + k}};
    j.update(RunJson(*r, spec));
    runs.push_back(j);
    sum += r->ettr;
    lo = std::min(lo, r->ettr);
    hi = std::max(hi, r->ettr);
    if (k == 0 && !a.attempts.empty())
      if (Status st = WriteAttempts(a.attempts, r->attempts); !st.ok()) return Fail("resilience", st.error());
  }
  out["ettr_mean"] = Round(sum / a.seeds, 1e-5);
  out["ettr_min"] = Round(lo, 1e-5);
  out["ettr_max"] = Round(hi, 1e-5);
  out["runs"] = runs;
  if (!a.out.empty())
    if (Status st = WriteJson(a.out, out); !st.ok()) return Fail("resilience", st.error());
  if (!a.quiet) {
    const nlohmann::ordered_json& f = runs[0];
    std::printf("%s | %s | %s: ETTR %.2f %% (mean of %u seeds; min %.2f, max %.2f); seed %llu: %u restarts, "
                "MTBF %.2f h, interval %lld s, MTTR %.0f s, %u manual, %u cordoned, %u faults on flaky nodes\n",
                a.recovery.c_str(), a.checkpoint.c_str(), a.failures.c_str(), 100 * sum / a.seeds, a.seeds, 100 * lo,
                100 * hi, static_cast<unsigned long long>(a.seed), f["restarts"].get<uint32_t>(),
                f["mtbf_hours"].get<double>(), static_cast<long long>(f["checkpoint_interval_s"].get<int64_t>()),
                f["mttr_s"].get<double>(), f["manual_recoveries"].get<uint32_t>(), f["cordoned_nodes"].get<uint32_t>(),
                f["flaky_node_faults"].get<uint32_t>());
  }
  return 0;
}

int RunAttribute(const AttributeArgs& a) {
  Result<FailureModel> model = MakeFailureModel(a.failures);
  if (!model) return Fail("resilience", model.error());
  Result<Trace> trace = LoadTrace(a.trace);
  if (!trace) return Fail("resilience", trace.error());
  const FailureBreakdown b = AttributeTrace(*trace, *model, a.gpus_per_node, a.seed);
  if (b.failed == 0) return Fail("resilience", MakeError(a.trace + ": no failed GPU job (FAILED or NODE_FAIL) to attribute"));
  nlohmann::ordered_json out;
  out["trace"] = a.trace;
  out["failures"] = a.failures;
  out["gpu_jobs"] = b.jobs;
  out["failed_jobs"] = b.failed;
  out["failed_job_share"] = Round(static_cast<double>(b.failed) / b.jobs, 1e-4);
  out["failed_gpu_time_share"] = Round(b.failed_gpu_seconds / b.gpu_seconds, 1e-4);
  nlohmann::ordered_json cats;
  for (int c = 0; c < kNumFailureCategories; ++c) {
    cats[std::string(FailureCategoryName(static_cast<FailureCategory>(c)))] = {
        {"failed_jobs", b.by_category[c]},
        {"share_of_failed_jobs", Round(static_cast<double>(b.by_category[c]) / b.failed, 1e-4)},
        {"share_of_failed_gpu_time", Round(b.gpu_seconds_by_category[c] / b.failed_gpu_seconds, 1e-4)},
        {"expected_share_of_failed_jobs", Round(b.expected_jobs[c] / b.failed, 1e-4)},
        {"expected_share_of_failed_gpu_time", Round(b.expected_gpu_seconds[c] / b.failed_gpu_seconds, 1e-4)}};
  }
  out["by_category"] = cats;
  if (!a.out.empty())
    if (Status st = WriteJson(a.out, out); !st.ok()) return Fail("resilience", st.error());
  if (!a.quiet) {
    std::printf("%s: %llu failed of %llu GPU jobs\n", a.trace.c_str(), static_cast<unsigned long long>(b.failed),
                static_cast<unsigned long long>(b.jobs));
    for (int c = 0; c < kNumFailureCategories; ++c)
      std::printf("  %-15s %5.1f %% of failed jobs, %5.1f %% of failed GPU time (expected %5.1f %%, %5.1f %%)\n",
                  std::string(FailureCategoryName(static_cast<FailureCategory>(c))).c_str(),
                  100.0 * b.by_category[c] / b.failed, 100.0 * b.gpu_seconds_by_category[c] / b.failed_gpu_seconds,
                  100.0 * b.expected_jobs[c] / b.failed, 100.0 * b.expected_gpu_seconds[c] / b.failed_gpu_seconds);
  }
  return 0;
}

}  // namespace

void RegisterResilience(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("resilience", "Fault tolerance: a long training job under failures; failure attribution");
  SetExamples(cmd, {"./build/orrery resilience train --seeds 2",
                    "./build/orrery resilience attribute tests/fixtures/trace/acme_seren.csv"});
  cmd->require_subcommand(1);
  auto t = std::make_shared<TrainArgs>();
  auto* train = cmd->add_subcommand("train", "One gang training job under a failure model: ETTR, GPU-hours lost by cause");
  SetExamples(train, {"./build/orrery resilience train --seeds 2",
                      "./build/orrery resilience train --seeds 2 --recovery acme:spares=16 --checkpoint async:every=young-daly"});
  train->add_option("--nodes", t->nodes, "Nodes of the gang (default 2048)")->check(CLI::Range(1u, 1000000u));
  train->add_option("--gpus-per-node", t->gpus_per_node, "GPUs per node (default 8)")->check(CLI::Range(1u, 64u));
  train->add_option("--cold-nodes", t->cold_nodes, "Idle healthy nodes besides hot spares (default 64)");
  train->add_option("--days", t->days, "Wall time since the first start (default 54)")->check(CLI::Range(0.001, 3650.0));
  train->add_option("--failures", t->failures, "Failure model: llama3 or acme [:scale=,loss_spikes_per_day=,persist=,recur=,repair=,rollback=]");
  train->add_option("--checkpoint", t->checkpoint, "none | sync:every=3h | async:every=young-daly[,write=,snapshot=,restore=,init=] | "
                    "memory:every=young-daly[,peers=,replicate=,persist_every=,restore_memory=,...]");
  train->add_option("--recovery", t->recovery, "none | requeue[:from=scratch|checkpoint] | acme[:spares=N,restart=job|in-job,reinit=,overlap=,...]");
  train->add_option("--seed", t->seed, "Random seed (default 1)");
  train->add_option("--seeds", t->seeds, "Number of seeds (seed, seed+1, ...) to average (default 1)")->check(CLI::Range(1u, 1000u));
  train->add_option("--out", t->out, "Write the summary JSON here (atomic; '-' = stdout)");
  train->add_option("--attempts", t->attempts, "Write the first seed's attempts CSV here");
  train->add_flag("-q,--quiet", t->quiet, "Print nothing on success");
  train->callback([t, exit_code] { *exit_code = RunTrain(*t); });
  auto at = std::make_shared<AttributeArgs>();
  auto* attr = cmd->add_subcommand("attribute", "A trace's recorded failures by category (infrastructure/framework/script)");
  SetExamples(attr, {"./build/orrery resilience attribute tests/fixtures/trace/acme_seren.csv"});
  attr->add_option("trace", at->trace, "Trace file (any supported format)")->required();
  attr->add_option("--failures", at->failures, "Failure model used for attribution (default acme)");
  attr->add_option("--gpus-per-node", at->gpus_per_node, "GPUs per node (default 8)")->check(CLI::Range(1u, 64u));
  attr->add_option("--seed", at->seed, "Random seed (default 1)");
  attr->add_option("--out", at->out, "Write the breakdown JSON here (atomic; '-' = stdout)");
  attr->add_flag("-q,--quiet", at->quiet, "Print nothing on success");
  attr->callback([at, exit_code] { *exit_code = RunAttribute(*at); });
}

}  // namespace orrery::cli
