// `orrery predict evaluate TRACE [--estimator LIST] [--train-fraction 0.5] [--json] [--out FILE]`:
// chronological-split, online evaluation of duration estimators (docs/predict.md).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/io.h"
#include "cli/commands.h"
#include "predict/evaluate.h"
#include "predict/interference.h"
#include "trace/import.h"

namespace orrery::cli {

namespace {

// Writes a JSON document to stdout ('-') or atomically to a file (temp + rename).
int EmitJson(const std::string& path, const nlohmann::ordered_json& j) {
  const std::string text = DumpJson(j, 2) + "\n";
  if (path == "-") {
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  Status w = WriteFileAtomic(path, text);
  if (!w.ok()) {
    std::fprintf(stderr, "orrery predict: %s\n", w.error().message.c_str());
    return kExitRuntime;
  }
  return kExitOk;
}


struct PredictArgs {
  std::string trace;
  std::string format = "auto";
  std::string estimators = "history,user-stats,xgboost,blend,walltime";
  double train_fraction = 0.5;
  uint64_t seed = 1;
  bool json = false;  // JSON to stdout instead of the table
  std::string out;    // the JSON to this file too
  bool swf_procs_as_gpus = false;
};

std::vector<std::string> SplitSpecs(const std::string& list) {
  // Specs are separated by ';' or by ',' that does not start a key=value option
  // ("xgboost:rounds=50,depth=4,user-stats" -> two specs).
  std::vector<std::string> out;
  std::string cur;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    for (size_t p; (p = part.find(';')) != std::string::npos;) {
      cur += (cur.empty() ? "" : ",") + part.substr(0, p);
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      part = part.substr(p + 1);
    }
    const bool option = part.find('=') != std::string::npos && part.find(':') == std::string::npos;
    if (option && !cur.empty()) {
      cur += "," + part;
    } else {
      if (!cur.empty()) out.push_back(cur);
      cur = part;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// The evaluation as a table (the JSON has the same figures).
void PrintEvaluation(const std::vector<EvalResult>& rs, double train_fraction) {
  if (!rs.empty()) {
    std::printf("train jobs %zu, test jobs %zu (train fraction %.2f; online, no queueing)\n", rs[0].train_jobs,
                rs[0].test_jobs, train_fraction);
  }
  std::printf("%-28s %10s %9s %7s %7s %7s %7s %8s %8s %7s\n", "estimator", "MAE(s)", "MAPE%", "MdAPE%", "R2",
              "R2log", "in2x", "spearman", "kendall", "time(s)");
  for (const auto& r : rs) {
    const auto& m = r.metrics;
    std::printf("%-28s %10.0f %9.1f %7.1f %7.3f %7.3f %7.3f %8.3f %8.3f %7.2f\n", r.spec.c_str(), m.mae, m.mape,
                m.mdape, m.r2, m.r2_log, m.within_2x, m.spearman, m.kendall, r.seconds);
  }
  for (const auto& r : rs) {
    if (r.details.empty()) continue;
    std::string line = r.spec + ":";
    for (const auto& [k, v] : r.details) line += fmt::format(" {}={:.4g}", k, v);
    std::printf("  %s\n", line.c_str());
  }
}

int RunEvaluate(const PredictArgs& a) {
  Result<TraceFormat> fmt = ParseTraceFormat(a.format);
  if (!fmt.ok()) {
    std::fprintf(stderr, "orrery predict: %s\n", fmt.error().message.c_str());
    return kExitBadInput;
  }
  ImportOptions opt;
  opt.swf_procs_as_gpus = a.swf_procs_as_gpus;
  Result<Trace> trace = LoadTrace(a.trace, *fmt, opt);
  if (!trace.ok()) {
    std::fprintf(stderr, "orrery predict: %s\n", trace.error().message.c_str());
    return trace.error().exit_code;
  }
  size_t with_user = 0, with_name = 0, with_dur = 0, with_wall = 0;
  for (const Job& j : trace->jobs) {
    with_user += j.user.valid();
    with_name += j.name.valid();
    with_dur += j.duration >= 0;
    with_wall += j.walltime > 0;
  }
  const size_t n = trace->jobs.size();
  std::fprintf(stderr,
               "orrery predict: %s (%s): %zu jobs, %zu with a duration; users on %zu, names on %zu, walltimes on "
               "%zu; %zu users, %zu distinct names\n",
               a.trace.c_str(), trace->origin.c_str(), n, with_dur, with_user, with_name, with_wall,
               trace->users.size(), trace->names.size());
  if (with_name == 0) {
    std::fprintf(stderr,
                 "orrery predict: note: the trace has no job names: 'history' falls back to the user's mean (or the "
                 "global mean), and xgboost has no name features\n");
  }
  if (with_user == 0) {
    std::fprintf(stderr,
                 "orrery predict: note: the trace has no users: user statistics fall back to per-GPU-count / global "
                 "statistics\n");
  }
  EvalOptions eo;
  eo.train_fraction = a.train_fraction;
  eo.seed = a.seed;
  auto specs = SplitSpecs(a.estimators);
  Result<std::vector<EvalResult>> res = EvaluateEstimators(*trace, specs, eo);
  if (!res.ok()) {
    std::fprintf(stderr, "orrery predict: %s\n", res.error().message.c_str());
    return res.error().exit_code;
  }
  const auto& rs = *res;
  if (!a.json) PrintEvaluation(rs, a.train_fraction);
  if (a.json || !a.out.empty()) {
    nlohmann::ordered_json j;
    j["trace"] = a.trace;
    j["origin"] = trace->origin;
    j["jobs"] = n;
    j["jobs_with_user"] = with_user;
    j["jobs_with_name"] = with_name;
    j["train_fraction"] = a.train_fraction;
    j["results"] = nlohmann::ordered_json::array();
    for (const auto& r : rs) {
      const auto& m = r.metrics;
      nlohmann::ordered_json e;
      e["estimator"] = r.spec;
      e["train_jobs"] = r.train_jobs;
      e["test_jobs"] = r.test_jobs;
      e["mae_s"] = m.mae;
      e["mape_pct"] = m.mape;
      e["mdape_pct"] = m.mdape;
      e["r2"] = m.r2;
      e["r2_log"] = m.r2_log;
      e["within_2x"] = m.within_2x;
      e["spearman"] = m.spearman;
      e["kendall_tau_b"] = m.kendall;
      e["mean_actual_s"] = m.mean_actual;
      e["mean_predicted_s"] = m.mean_predicted;
      e["seconds"] = r.seconds;
      for (const auto& [k, v] : r.details) e["details"][k] = v;
      j["results"].push_back(e);
    }
    if (a.json) EmitJson("-", j);
    if (!a.out.empty()) return EmitJson(a.out, j);
  }
  return kExitOk;
}

struct InterferenceArgs {
  std::string table;
  int folds = 5;
  uint64_t seed = 1;
  double limit = 0.8;
  bool profiles = false;
  bool json = false;  // JSON to stdout instead of the table
  std::string out;    // the JSON to this file too
};

// The cross-validation as text (the JSON has the same figures).
void PrintCrossValidation(const CvReport& r, const ColocationTable& table, const std::string& path, uint64_t seed) {
  std::printf("interference model: %zu measured pairs, %zu workloads (%s)\n", r.pairs, table.workloads().size(),
              path.c_str());
  std::printf("%d-fold cross-validation (seed %llu), %zu held-out speed predictions:\n", r.folds,
              static_cast<unsigned long long>(seed), r.predictions);
  std::printf("  %-22s %8s %8s %8s %8s\n", "model", "MAE", "MAPE%", "RMSE", "corr");
  std::printf("  %-22s %8.4f %8.2f %8.4f %8.3f\n", "xgboost (depth 3)", r.mae, r.mape, r.rmse, r.corr);
  std::printf("  %-22s %8.4f %8.2f %8s %8s\n", "constant mean", r.base_mae, r.base_mape, "-", "-");
  std::printf("  admission at min speed >= %.2f: %.1f %% of held-out pairs decided as measured, %.1f %% false accepts\n",
              r.limit, 100 * r.decision_accuracy, 100 * r.false_accept);
}

// `orrery predict interference [--table CSV] [--folds 5] [--seed 1] [--limit 0.8] [--profiles]`:
// k-fold cross-validated error of the GPU-sharing interference model (predict/interference.h).
int RunInterference(const InterferenceArgs& a) {
  std::string path = a.table.empty() ? DefaultColocationPath() : a.table;
  auto table = ColocationTable::Load(path);
  if (!table.ok()) {
    std::fprintf(stderr, "orrery predict interference: %s\n", table.error().message.c_str());
    return kExitBadInput;
  }
  auto rep = CrossValidate(*table, a.folds, a.seed, {}, a.limit);
  if (!rep.ok()) {
    std::fprintf(stderr, "orrery predict interference: %s\n", rep.error().message.c_str());
    return kExitRuntime;
  }
  const CvReport& r = *rep;
  if (!a.json) PrintCrossValidation(r, *table, path, a.seed);
  nlohmann::ordered_json j = {{"table", path},           {"pairs", r.pairs},         {"workloads", table->workloads().size()},
                              {"folds", r.folds},        {"seed", a.seed},           {"predictions", r.predictions},
                              {"mae", r.mae},            {"mape_percent", r.mape},   {"rmse", r.rmse},
                              {"corr", r.corr},          {"baseline_mae", r.base_mae}, {"baseline_mape_percent", r.base_mape},
                              {"limit", r.limit},        {"decision_accuracy", r.decision_accuracy},
                              {"false_accept", r.false_accept}};
  if (a.profiles) {
    ColocationTable t = *table;
    std::vector<size_t> all(t.pairs().size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    DeriveProfiles(&t, all);
    if (!a.json) {
      std::printf("derived solo profiles (least-squares decomposition of the pair footprints):\n");
      std::printf("  %-36s %8s %8s %8s\n", "workload", "gpu%", "gmem%", "gmemMiB");
    }
    j["profiles"] = nlohmann::ordered_json::array();
    for (const Workload& w : t.workloads()) {
      if (!a.json) std::printf("  %-36s %8.1f %8.1f %8.0f\n", w.Label().c_str(), w.gpu_util, w.gmem_util, w.gmem);
      j["profiles"].push_back({{"workload", w.Label()}, {"gpu_util_pct", w.gpu_util}, {"gmem_util_pct", w.gmem_util},
                               {"gmem_mib", w.gmem}});
    }
  }
  if (a.json) EmitJson("-", j);
  if (!a.out.empty()) return EmitJson(a.out, j);
  return kExitOk;
}

}  // namespace

void RegisterPredict(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("predict", "Job-duration prediction: evaluate estimators on a trace");
  SetExamples(cmd, {"./build/orrery predict evaluate tests/fixtures/trace/replay_philly.csv --estimator user-stats,history",
                    "./build/orrery predict interference --folds 5"});
  cmd->require_subcommand(1);
  auto args = std::make_shared<PredictArgs>();
  auto* ev = cmd->add_subcommand("evaluate", "Chronological-split online evaluation of duration estimators");
  SetExamples(ev, {"./build/orrery predict evaluate tests/fixtures/trace/replay_philly.csv --estimator user-stats,history,walltime"});
  ev->add_option("trace", args->trace, "Trace file (any supported format)")->required();
  ev->add_option("--format,--from", args->format,
                 "Trace format: auto, canonical, helios, philly, openb, swf, sacct, acme (default: auto)");
  ev->add_option("--estimator,-e", args->estimators,
                 "Comma-separated estimator specs, e.g. history,user-stats:stat=mean,xgboost,blend:alpha=0.1,"
                 "walltime,oracle (';' also separates)");
  ev->add_option("--train-fraction", args->train_fraction, "Fraction of jobs (chronological) used as warm-up history")
      ->check(CLI::Range(0.0, 0.99));
  ev->add_option("--seed", args->seed, "Seed (noisy-oracle, xgboost)");
  ev->add_flag("--json", args->json, "Print the results as JSON instead of the table");
  ev->add_option("--out", args->out, "Also write the results as JSON to FILE (atomically)");
  ev->add_flag("--swf-procs-as-gpus", args->swf_procs_as_gpus, "SWF: treat processors as GPUs");
  ev->callback([args, exit_code] { *exit_code = RunEvaluate(*args); });
  auto iargs = std::make_shared<InterferenceArgs>();
  auto* in = cmd->add_subcommand("interference", "Cross-validated error of the GPU-sharing interference model");
  SetExamples(in, {"./build/orrery predict interference --folds 5 --profiles"});
  in->add_option("--table", iargs->table, "Lucid's colocate_info.csv (default: $ORRERY_SHARED_DIR/traces/lucid-colocation/)");
  in->add_option("--folds", iargs->folds, "Number of folds")->check(CLI::Range(2, 1000));
  in->add_option("--seed", iargs->seed, "Seed of the fold split");
  in->add_option("--limit", iargs->limit, "Admission limit on the pair's lower speed")->check(CLI::Range(0.0, 1.0));
  in->add_flag("--profiles", iargs->profiles, "Also print the derived per-workload solo profiles");
  in->add_flag("--json", iargs->json, "Print the results as JSON instead of the table");
  in->add_option("--out", iargs->out, "Also write the results as JSON to FILE (atomically)");
  in->callback([iargs, exit_code] { *exit_code = RunInterference(*iargs); });
}

}  // namespace orrery::cli
