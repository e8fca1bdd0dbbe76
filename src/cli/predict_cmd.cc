// `orrery predict evaluate TRACE [--estimator LIST] [--train-fraction 0.5] [--json FILE]`:
// chronological-split, online evaluation of duration estimators (docs/predict.md).
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "predict/evaluate.h"
#include "trace/import.h"

namespace orrery::cli {

namespace {

struct PredictArgs {
  std::string trace;
  std::string format = "auto";
  std::string estimators = "history,user-stats,xgboost,blend,walltime";
  double train_fraction = 0.5;
  uint64_t seed = 1;
  std::string json;
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
  if (!rs.empty()) {
    std::printf("train jobs %zu, test jobs %zu (train fraction %.2f; online, no queueing)\n", rs[0].train_jobs,
                rs[0].test_jobs, a.train_fraction);
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
  if (!a.json.empty()) {
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
    std::string text = j.dump(2) + "\n";
    if (a.json == "-") {
      std::fputs(text.c_str(), stdout);
    } else {
      std::ofstream f(a.json);
      f << text;
      if (!f) {
        std::fprintf(stderr, "orrery predict: cannot write %s\n", a.json.c_str());
        return kExitRuntime;
      }
    }
  }
  return kExitOk;
}

}  // namespace

void RegisterPredict(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("predict", "Job-duration prediction: evaluate estimators on a trace");
  cmd->require_subcommand(1);
  auto args = std::make_shared<PredictArgs>();
  auto* ev = cmd->add_subcommand("evaluate", "Chronological-split online evaluation of duration estimators");
  ev->add_option("trace", args->trace, "Trace file (any supported format)")->required();
  ev->add_option("--from", args->format, "Trace format (default: auto)");
  ev->add_option("--estimator,-e", args->estimators,
                 "Comma-separated estimator specs, e.g. history,user-stats:stat=mean,xgboost,blend:alpha=0.1,"
                 "walltime,oracle (';' also separates)");
  ev->add_option("--train-fraction", args->train_fraction, "Fraction of jobs (chronological) used as warm-up history")
      ->check(CLI::Range(0.0, 0.99));
  ev->add_option("--seed", args->seed, "Seed (noisy-oracle, xgboost)");
  ev->add_option("--json", args->json, "Also write the results as JSON to this file ('-' = stdout)");
  ev->add_flag("--swf-procs-as-gpus", args->swf_procs_as_gpus, "SWF: treat processors as GPUs");
  ev->callback([args, exit_code] { *exit_code = RunEvaluate(*args); });
}

}  // namespace orrery::cli
